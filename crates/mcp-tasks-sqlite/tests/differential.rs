//! Differential test: random histories of store operations give exactly the
//! same results on SQLite as on the in-memory reference store (the shared
//! model: `mcp_tasks_store::conformance::differential`).

use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::differential::{op, run};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 200, ..ProptestConfig::default() })]
    #[test]
    fn sqlite_agrees_with_the_reference_store(ops in proptest::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let sqlite = SqliteStore::open(dir.path().join("diff.db")).expect("open");
        rt.block_on(run(ops, &sqlite))?;
    }
}
