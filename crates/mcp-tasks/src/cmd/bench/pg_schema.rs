//! A throw-away PostgreSQL schema for one benchmark server: created empty,
//! dropped with everything in it when the measurement is over.

use anyhow::Context;

/// A schema named `mcp_tasks_bench_<random>` in the database a URL names.
pub(crate) struct PgSchema {
    base_url: String,
    name: String,
}

impl PgSchema {
    /// Creates the schema.
    pub(crate) async fn create(base_url: &str) -> anyhow::Result<PgSchema> {
        let name = format!("mcp_tasks_bench_{}", mcp_tasks_core::TaskId::random().as_str().replace('-', ""));
        let client = connect(base_url).await?;
        client.batch_execute(&format!("CREATE SCHEMA {name}")).await.with_context(|| format!("cannot create {name}"))?;
        Ok(PgSchema { base_url: base_url.to_owned(), name })
    }

    /// The base URL with this schema first on every connection's `search_path`.
    pub(crate) fn url(&self) -> String {
        let separator = if self.base_url.contains('?') { '&' } else { '?' };
        format!("{}{separator}options=-csearch_path%3D{}", self.base_url, self.name)
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        // Drop may run inside the runtime: drop the schema from a thread of its own.
        let (url, name) = (self.base_url.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async {
                let client = connect(&url).await.ok()?;
                client.batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE")).await.ok()
            })
        });
        let _ = dropped.join();
    }
}

async fn connect(url: &str) -> anyhow::Result<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .with_context(|| format!("cannot connect to PostgreSQL at {url}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}
