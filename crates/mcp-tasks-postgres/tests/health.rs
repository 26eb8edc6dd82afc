//! `health()`: ready while the database answers with our schema; not when
//! the schema's tasks table is gone.

use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::{StoreError, TaskStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_a_vanished_tasks_table() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = PostgresStore::open(&db.url()).await.expect("open");
    store.health().await.expect("a fresh store is healthy");
    // CASCADE: the attempt history's foreign key depends on the table.
    db.connect().await.batch_execute("DROP TABLE tasks CASCADE").await.expect("drop the tasks table");
    match store.health().await {
        Err(StoreError::Unavailable(message)) => {
            assert!(message.contains("tasks table is gone"), "{message}")
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}
