//! The shared conformance suite against the in-memory reference store.

use std::sync::Arc;

use mcp_tasks_store::MemoryStore;
use mcp_tasks_store::conformance::Fixture;

async fn fresh_store() -> Fixture {
    Fixture::new(Arc::new(MemoryStore::new()))
}

mcp_tasks_store::store_conformance_tests!(fresh_store);
