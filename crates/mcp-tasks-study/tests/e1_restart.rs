//! E1 in detail: what each store answers for every handle after the crash.

use mcp_tasks_study::e1::{self, StoreKind};

#[tokio::test]
async fn memory_store_loses_every_handle_with_its_results() {
    let row = e1::run_store(StoreKind::Memory).await.unwrap();
    assert_eq!((row.issued, row.completed, row.in_flight), (20, 12, 8));
    assert_eq!((row.resolved, row.lost, row.resumable, row.results_kept), (0, 20, 0, 0));
    assert_eq!(row.survival, 0.0);
    assert!(row.reason.contains("12 completed results"), "{}", row.reason);
}

#[tokio::test]
async fn sqlite_store_keeps_every_handle_and_resumes_the_in_flight_ones() {
    let row = e1::run_store(StoreKind::Sqlite).await.unwrap();
    assert_eq!((row.resolved, row.lost, row.resumable, row.results_kept), (20, 0, 8, 12));
    assert_eq!(row.survival, 1.0);
}
