//! The shared store conformance suite on a real SQLite file in a temp dir.

use std::sync::Arc;

use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::Fixture;

async fn fresh_store() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("tasks.db")).expect("open a fresh database");
    Fixture::keeping(Arc::new(store), dir)
}

mcp_tasks_store::store_conformance_tests!(fresh_store);
