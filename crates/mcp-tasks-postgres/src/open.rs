//! Opening a database: the connection pool, recognising the schema as ours
//! (or empty), and migrating it to the current version.

use std::time::Duration;

use deadpool_postgres::{GenericClient, Hook, HookError, Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use mcp_tasks_store::StoreError;
use tokio_postgres::NoTls;

use crate::failure::describe;
use crate::options::PostgresOptions;
use crate::schema::{MIGRATIONS, VERSION_TABLE, latest_version};

/// Run on every new connection: a session that inherited
/// `synchronous_commit = off` (from the role, the database or the URL) gets
/// it back on, so a commit is acknowledged only once it is durable. Any
/// stronger setting (`remote_write`, `remote_apply`, `local`) is kept.
const DURABLE_SESSION: &str =
    "SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'";

fn open_error(shown_url: &str, reason: impl Into<String>) -> StoreError {
    StoreError::Open { path: shown_url.to_owned(), reason: reason.into() }
}

/// Why no first connection could be made, in one line.
fn connect_failure(e: &PoolError, options: &PostgresOptions) -> String {
    let why = match e {
        PoolError::Backend(e) | PoolError::PostCreateHook(HookError::Backend(e)) => {
            match e.as_db_error() {
                // The server answered: it is reachable but refused us.
                Some(_) => return format!("the database refused the connection: {}", describe(e)),
                None => describe(e),
            }
        }
        PoolError::Timeout(_) => format!("no answer within {:?}", options.connect_timeout),
        other => other.to_string(),
    };
    format!("database unreachable: {why}")
}

/// Builds the pool, makes the first connection (so an unreachable database
/// fails here, not at the first request), checks the schema is ours, and
/// migrates it. Also returns the connection settings, for the connection
/// the event listener keeps outside the pool.
pub(crate) async fn open_pool(
    url: &str,
    shown_url: &str,
    options: &PostgresOptions,
) -> Result<(Pool, tokio_postgres::Config), StoreError> {
    let mut config: tokio_postgres::Config =
        url.parse().map_err(|e| open_error(shown_url, format!("invalid database URL: {}", describe(&e))))?;
    config.connect_timeout(options.connect_timeout);
    // A server that vanishes without closing the connection (a partition,
    // a powered-off host) is noticed within about a minute rather than the
    // kernel's two hours, so an operation fails instead of hanging. A URL
    // that sets these itself keeps its values.
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(Duration::from_secs(60));
    }
    if config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
        config.keepalives_idle(Duration::from_secs(30)).keepalives_interval(Duration::from_secs(10)).keepalives_retries(3);
    }
    let listen_config = config.clone();
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            // A connection the server closed (terminated backend, restart)
            // is dropped at checkout and a fresh one made.
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(options.max_connections.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(options.wait_timeout))
        .create_timeout(Some(options.connect_timeout))
        .recycle_timeout(Some(options.connect_timeout))
        .post_create(Hook::async_fn(|client, _| {
            Box::pin(async move { client.simple_query(DURABLE_SESSION).await.map(|_| ()).map_err(HookError::Backend) })
        }))
        .build()
        .map_err(|e| open_error(shown_url, format!("cannot build the connection pool: {e}")))?;
    let mut client = pool.get().await.map_err(|e| open_error(shown_url, connect_failure(&e, options)))?;
    migrate(&mut client, shown_url).await?;
    drop(client);
    Ok((pool, listen_config))
}

/// What the current schema holds.
enum Found {
    /// Our schema at this version (0: empty, nothing there yet).
    Ours(i32),
    /// Someone else's, or ours from the future: never touched.
    Refused(StoreError),
}

/// Brings the schema to [`latest_version`], one migration per transaction.
/// Each transaction first takes an advisory lock on the schema's name and
/// looks again, so instances opening a fresh schema at once migrate it once.
async fn migrate(client: &mut deadpool_postgres::Client, shown_url: &str) -> Result<(), StoreError> {
    let fail = |what: &str, e: tokio_postgres::Error| open_error(shown_url, format!("{what}: {}", describe(&e)));
    loop {
        let tx = client.transaction().await.map_err(|e| fail("cannot begin a transaction", e))?;
        let schema: Option<String> = tx
            .query_one("SELECT current_schema()", &[])
            .await
            .and_then(|r| r.try_get(0))
            .map_err(|e| fail("cannot read the current schema", e))?;
        let Some(schema) = schema else {
            return Err(open_error(shown_url, "no schema on the search_path exists; create it or fix search_path"));
        };
        tx.execute("SELECT pg_advisory_xact_lock(hashtextextended('mcp-tasks migrations ' || current_schema(), 0))", &[])
            .await
            .map_err(|e| fail("cannot lock the schema for migration", e))?;
        let version = match inspect(&tx, &schema, shown_url).await? {
            Found::Ours(v) => v,
            Found::Refused(e) => return Err(e),
        };
        let Some(migration) = MIGRATIONS.get(version as usize) else {
            // Up to date; nothing was written.
            return Ok(());
        };
        let to = version + 1;
        let step = async {
            tx.batch_execute(migration.sql).await?;
            tx.execute(
                &format!("INSERT INTO {VERSION_TABLE} (version, description) VALUES ($1, $2)"),
                &[&to, &migration.description],
            )
            .await?;
            tx.commit().await
        };
        // Dropping an unfinished transaction rolls it back: the previous
        // version stays intact.
        step.await.map_err(|e| fail(&format!("migration to schema version {to} failed"), e))?;
    }
}

/// Reads what the current schema holds, under the migration lock.
async fn inspect(tx: &deadpool_postgres::Transaction<'_>, schema: &str, shown_url: &str) -> Result<Found, StoreError> {
    let fail = |e: tokio_postgres::Error| open_error(shown_url, format!("cannot inspect schema {schema}: {}", describe(&e)));
    let names: Vec<String> = tx
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') \
             ORDER BY c.relname",
            &[],
        )
        .await
        .map_err(fail)?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    let refuse =
        |reason: String| Found::Refused(StoreError::NotOurs { path: format!("{shown_url} (schema {schema})"), reason });
    if names.is_empty() {
        return Ok(Found::Ours(0));
    }
    if !names.iter().any(|n| n == VERSION_TABLE) {
        let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
        let more = if names.len() > 5 { ", …" } else { "" };
        return Ok(refuse(format!(
            "the schema holds tables of another application ({}{more}) and no {VERSION_TABLE}",
            shown.join(", ")
        )));
    }
    let version: Option<i32> = tx
        .query_one(&format!("SELECT max(version) FROM {VERSION_TABLE}"), &[])
        .await
        .and_then(|r| r.try_get(0))
        .map_err(fail)?;
    Ok(match version {
        None => refuse(format!("its {VERSION_TABLE} table is empty")),
        Some(v) if v > latest_version() => refuse(format!(
            "its schema version {v} is newer than this build understands ({}); upgrade mcp-tasks",
            latest_version()
        )),
        Some(v) => Found::Ours(v),
    })
}

#[cfg(test)]
mod tests {
    use deadpool_postgres::GenericClient;

    use super::open_pool;
    use crate::options::PostgresOptions;
    use crate::testing::TestDatabase;

    /// Every pooled session commits durably, even when the URL (or the role,
    /// or the database) turned `synchronous_commit` off.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pooled_sessions_keep_synchronous_commit_on() {
        let Some(db) = TestDatabase::create().await else { return };
        let url = db.url().replace("options=-csearch_path", "options=-csynchronous_commit%3Doff%20-csearch_path");
        let plain = |url: String| async move {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(connection);
            let row = client.query_one("SHOW synchronous_commit", &[]).await.expect("show");
            row.get::<_, String>(0)
        };
        assert_eq!(plain(url.clone()).await, "off", "the URL turns it off for a plain session");
        let (pool, _) = open_pool(&url, "(test)", &PostgresOptions::default()).await.expect("open");
        for _ in 0..3 {
            let client = pool.get().await.expect("pooled connection");
            let setting: String = client.query_one("SHOW synchronous_commit", &[]).await.expect("show").get(0);
            assert_eq!(setting, "on");
        }
    }
}
