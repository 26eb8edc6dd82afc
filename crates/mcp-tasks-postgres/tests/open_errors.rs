//! Opening the wrong thing gives a one-line error naming what was wrong,
//! and never modifies a schema that is not ours.

use std::time::Duration;

use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_postgres::{PostgresOptions, PostgresStore};
use mcp_tasks_store::StoreError;
use mcp_tasks_store::conformance::support::{at, create, get, new_task};

/// The error of an open that must fail, checked to be one line.
async fn open_error(url: &str) -> StoreError {
    let options = PostgresOptions { connect_timeout: Duration::from_secs(5), ..PostgresOptions::default() };
    let error = match tokio::time::timeout(Duration::from_secs(60), PostgresStore::open_with(url, options)).await {
        Ok(Ok(store)) => panic!("opening {url} must fail, but gave {store:?}"),
        Ok(Err(e)) => e,
        Err(_) => panic!("opening {url} hung"),
    };
    let message = error.to_string();
    assert!(!message.contains('\n'), "errors are one line: {message}");
    error
}

/// Names of the tables in the test schema, and the rows of each.
async fn tables(db: &TestDatabase) -> Vec<(String, i64)> {
    let client = db.connect().await;
    let names: Vec<String> = client
        .query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", &[&db.schema()])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut out = Vec::new();
    for name in names {
        let n: i64 = client.query_one(&format!("SELECT count(*) FROM {name}"), &[]).await.unwrap().get(0);
        out.push((name, n));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_is_named_without_its_password() {
    // Nothing listens on port 1.
    let error = open_error("postgres://app:s3cret@127.0.0.1:1/tasks").await;
    let message = error.to_string();
    assert!(matches!(error, StoreError::Open { .. }), "expected Open, got {message}");
    assert!(message.contains("unreachable"), "{message}");
    assert!(message.contains("postgres://app@127.0.0.1:1/tasks"), "the URL is named: {message}");
    assert!(!message.contains("s3cret"), "the password is never shown: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_url_is_refused() {
    let error = open_error("postgres://app:s3cret@127.0.0.1:notaport/tasks").await;
    let message = error.to_string();
    assert!(matches!(error, StoreError::Open { .. }), "{message}");
    assert!(message.contains("invalid database URL"), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_schema_is_named() {
    let Some(db) = TestDatabase::create().await else { return };
    let url = db.url().replace(&format!("search_path%3D{}", db.schema()), "search_path%3Dno_such_schema_here");
    let error = open_error(&url).await;
    let message = error.to_string();
    assert!(matches!(error, StoreError::Open { .. }), "{message}");
    assert!(message.contains("no schema on the search_path"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_applications_schema_is_not_ours_and_is_left_alone() {
    let Some(db) = TestDatabase::create().await else { return };
    db.connect()
        .await
        .batch_execute(
            "CREATE TABLE customers (id serial PRIMARY KEY, name text); \
             INSERT INTO customers (name) VALUES ('Ada'); \
             CREATE TABLE tasks (id text PRIMARY KEY);",
        )
        .await
        .unwrap();
    let before = tables(&db).await;
    let error = open_error(&db.url()).await;
    let message = error.to_string();
    assert!(matches!(error, StoreError::NotOurs { .. }), "{message}");
    assert!(
        message.contains("another application") && message.contains("customers"),
        "the reason names the tables: {message}"
    );
    assert!(message.contains(db.schema()), "the schema is named: {message}");
    assert_eq!(tables(&db).await, before, "a foreign schema is never modified");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused_and_left_alone() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = PostgresStore::open(&db.url()).await.expect("fresh open");
    let task = create(&store, new_task("report", at(0))).await;
    drop(store);
    db.connect()
        .await
        .batch_execute("INSERT INTO mcp_tasks_schema_migrations (version, description) VALUES (99, 'from the future')")
        .await
        .unwrap();
    let before = tables(&db).await;
    let error = open_error(&db.url()).await;
    let message = error.to_string();
    assert!(matches!(error, StoreError::NotOurs { .. }), "{message}");
    assert!(message.contains("99") && message.contains("newer"), "{message}");
    assert_eq!(tables(&db).await, before, "a newer schema is never modified");
    let client = db.connect().await;
    let id: String = client.query_one("SELECT id FROM tasks", &[]).await.unwrap().get(0);
    assert_eq!(id, task.id.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_keeps_tasks_and_instances_opening_at_once_migrate_once() {
    let Some(db) = TestDatabase::create().await else { return };
    let url = db.url();
    let mut opens = Vec::new();
    for _ in 0..4 {
        let url = url.clone();
        opens.push(tokio::spawn(async move { PostgresStore::open(&url).await }));
    }
    let mut stores = Vec::new();
    for open in opens {
        stores.push(open.await.unwrap().expect("concurrent open of a fresh schema"));
    }
    let task = create(&stores[0], new_task("report", at(0))).await;
    assert_eq!(get(&stores[3], &task.id).await, task, "every instance sees one database");
    drop(stores);
    let store = PostgresStore::open(&url).await.expect("reopen");
    assert_eq!(get(&store, &task.id).await, task);
    let versions: Vec<i32> = db
        .connect()
        .await
        .query("SELECT version FROM mcp_tasks_schema_migrations ORDER BY version", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (1..=8).collect::<Vec<i32>>(), "each migration ran once");
}
