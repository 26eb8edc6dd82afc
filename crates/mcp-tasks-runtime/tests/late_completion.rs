//! A handler that finishes after its task was cancelled or timed out by
//! someone else changes nothing: its write loses the lease guard.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_late_completion_after_a_timeout_changes_nothing() {
    let clock = clock();
    let store = memory();
    // Ignores cancellation: finishes only when the gate opens.
    let (worker, gate, id) = stalled(&store, &clock, json!({"late": true})).await;
    // Another instance's reaper (it does not know the handler runs elsewhere).
    let reaper = builder(store.clone(), &clock).build().unwrap();

    clock.advance(Duration::from_secs(1800));
    assert_eq!(reaper.reap_once().await.unwrap().timed_out, 1);
    let timed_out = stored(&store, &id).await;
    assert_eq!(timed_out.status, TaskStatus::Failed);

    gate.open(1);
    idle(&worker).await;
    let after = stored(&store, &id).await;
    assert_eq!(after, timed_out, "the late result was discarded");
}

#[tokio::test]
async fn a_late_completion_after_an_orphan_cancel_changes_nothing() {
    let clock = clock();
    let store = memory();
    let (worker, gate, id) = stalled(&store, &clock, json!({"late": true})).await;
    clock.advance(orphaned_after());
    // The sweep runs in the worker's own process: its handler is told, and ignores it.
    assert_eq!(worker.reap_once().await.unwrap().orphaned, 1);
    let cancelled = stored(&store, &id).await;
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert!(worker.running() == 1, "the handler ignores its token and keeps running");
    gate.open(1);
    idle(&worker).await;
    assert_eq!(stored(&store, &id).await, cancelled);
}
