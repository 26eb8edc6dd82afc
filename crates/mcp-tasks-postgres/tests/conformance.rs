//! The shared store conformance suite on a real PostgreSQL server, each
//! test in a schema of its own.

use std::sync::Arc;

use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::Fixture;

async fn fresh_store() -> Fixture {
    // The suite cannot skip a test: without a server it fails, saying so.
    let db =
        TestDatabase::create().await.expect("the PostgreSQL conformance suite needs a server (see the skip line above)");
    let store = PostgresStore::open(&db.url()).await.expect("open a fresh schema");
    Fixture::keeping(Arc::new(store), db)
}

mcp_tasks_store::store_conformance_tests!(fresh_store);
