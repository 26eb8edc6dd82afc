//! Differential test: random histories of store operations give exactly the
//! same results on PostgreSQL as on the in-memory reference store (the
//! shared model: `mcp_tasks_store::conformance::differential`, which SQLite
//! runs too).

use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::differential::{op, run};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 200, ..ProptestConfig::default() })]
    #[test]
    fn postgres_agrees_with_the_reference_store(ops in proptest::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
        rt.block_on(async {
            let Some(db) = TestDatabase::create().await else { return Ok(()) };
            let postgres = PostgresStore::open(&db.url()).await.expect("open");
            run(ops, &postgres).await
        })?;
    }
}
