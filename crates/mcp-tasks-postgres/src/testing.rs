//! [`TestDatabase`]: a throw-away schema of a real PostgreSQL server for
//! one test, so tests run in parallel on one database; [`CutProxy`] takes
//! that database away from a store and gives it back.
//!
//! The server comes from `MCP_TASKS_TEST_DATABASE_URL` (default
//! [`DEFAULT_TEST_DATABASE_URL`]). When it cannot be reached, a test under
//! CI (`CI=true`) fails; elsewhere [`TestDatabase::create`] prints a skip
//! line and returns `None`.

use std::time::Duration;

use tokio_postgres::NoTls;

pub use crate::cut_proxy::CutProxy;

/// Where tests look for PostgreSQL unless `MCP_TASKS_TEST_DATABASE_URL` says.
pub const DEFAULT_TEST_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// How long a test waits to reach the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A uniquely named schema, dropped (with everything in it) when this is
/// dropped.
#[derive(Debug)]
pub struct TestDatabase {
    base_url: String,
    schema: String,
}

impl TestDatabase {
    /// The server's URL tests use.
    pub fn server_url() -> String {
        std::env::var("MCP_TASKS_TEST_DATABASE_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_TEST_DATABASE_URL.to_owned())
    }

    /// Creates a fresh schema, or returns `None` (after printing why) when
    /// the server is unreachable outside CI.
    ///
    /// # Panics
    /// When the server is unreachable and `CI=true`, or it refuses to create
    /// the schema.
    pub async fn create() -> Option<TestDatabase> {
        let base_url = Self::server_url();
        let shown = crate::url::redact(&base_url);
        let admin = match connect(&base_url).await {
            Ok(client) => client,
            Err(why) => {
                let message =
                    format!("PostgreSQL is unreachable at {shown} ({why}); start it or set MCP_TASKS_TEST_DATABASE_URL");
                if std::env::var("CI").is_ok_and(|v| v == "true") {
                    panic!("{message}");
                }
                eprintln!("skipping: {message}");
                return None;
            }
        };
        let schema = format!("mcp_tasks_test_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create test schema {schema}: {}", crate::failure::describe(&e)));
        Some(TestDatabase { base_url, schema })
    }

    /// The schema's name; also the `application_name` of every connection
    /// made through [`url`](TestDatabase::url).
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// A URL whose connections use this schema (`search_path`) and name
    /// themselves after it (`application_name`).
    pub fn url(&self) -> String {
        let separator = if self.base_url.contains('?') { '&' } else { '?' };
        format!(
            "{}{separator}options=-csearch_path%3D{schema}&application_name={schema}",
            self.base_url,
            schema = self.schema
        )
    }

    /// A plain connection into the schema, for a test to look at or
    /// change what the store wrote.
    pub async fn connect(&self) -> tokio_postgres::Client {
        connect(&self.url()).await.unwrap_or_else(|why| panic!("cannot connect to the test schema {}: {why}", self.schema))
    }
}

/// Connects and drives the connection on a spawned task.
async fn connect(url: &str) -> Result<tokio_postgres::Client, String> {
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| format!("{e}"))?;
    config.connect_timeout(CONNECT_TIMEOUT);
    let (client, connection) = config.connect(NoTls).await.map_err(|e| crate::failure::describe(&e))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop may run inside or outside a runtime: drop the schema from a
        // thread of its own, with a bounded lock wait.
        let url = self.base_url.clone();
        let schema = self.schema.clone();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let client = connect(&url).await?;
                client
                    .batch_execute(&format!("SET lock_timeout = '10s'; DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .await
                    .map_err(|e| crate::failure::describe(&e))
            })
        })
        .join();
        if let Ok(Err(why)) = dropped {
            eprintln!("warning: test schema {} was not dropped: {why}", self.schema);
        }
    }
}
