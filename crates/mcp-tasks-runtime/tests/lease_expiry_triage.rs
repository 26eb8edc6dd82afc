//! A lapsed lease is triaged by another instance: the task resumes there as
//! the next attempt, and the first executor's late result changes nothing.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{TriageReport, TriageScope};
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_lapsed_lease_is_resumed_elsewhere() {
    let clock = clock();
    let store = memory();
    let (stalled, gate, id) = stalled(&store, &clock, json!({"by": "stalled"})).await;
    let healthy = builder(store.clone(), &clock)
        .tool(FnTool::new("t", |ctx| async move { Ok(json!({"by": "healthy", "attempt": ctx.attempt()})) }))
        .build()
        .unwrap();

    assert_eq!(healthy.triage_once(TriageScope::ExpiredLeases).await.unwrap(), TriageReport::default(), "lease still valid");
    clock.advance(Duration::from_millis(29_999));
    assert_eq!(healthy.triage_once(TriageScope::ExpiredLeases).await.unwrap(), TriageReport::default());
    clock.advance(Duration::from_millis(1)); // the 30 s lease lapses (inclusive)
    assert_eq!(healthy.triage_once(TriageScope::ExpiredLeases).await.unwrap().resumed, 1);
    let r = stored(&store, &id).await;
    assert_eq!((r.status, r.attempt, r.lease), (TaskStatus::Working, 2, None));

    assert_eq!(run_settled(&healthy).await, 1);
    let done = stored(&store, &id).await;
    assert_eq!(done.result, Some(json!({"by": "healthy", "attempt": 2})));

    gate.open(1); // the stalled executor wakes up and reports
    idle(&stalled).await;
    assert_eq!(stored(&store, &id).await, done, "its late result changed nothing");
}

#[tokio::test]
async fn a_cancel_requested_task_whose_executor_died_ends_cancelled() {
    let clock = clock();
    let store = memory();
    let (_dying, _gate, id) = stalled(&store, &clock, json!({})).await;
    let front = builder(store.clone(), &clock).build().unwrap();
    assert!(front.cancel_task(&id, None).await.unwrap().record.cancel_requested);
    clock.advance(Duration::from_secs(30));
    assert_eq!(front.triage_once(TriageScope::ExpiredLeases).await.unwrap().cancelled, 1);
    assert_eq!(stored(&store, &id).await.status, TaskStatus::Cancelled);
}

/// A handler that ignores its lost lease keeps running while this same
/// runtime claims the task's next attempt: each attempt keeps its own entry,
/// so the old one returning neither hides the new one from the concurrency
/// count nor from shutdown, which hands the new attempt's lease back.
#[tokio::test]
async fn an_old_attempt_returning_late_does_not_hide_the_new_one() {
    let clock = clock();
    let store = memory();
    let (g, mut gate) = gate();
    let a = builder(store.clone(), &clock)
        .concurrency(4)
        .single_node(false)
        .tool(held("t", &g, json!({"by": "a"})))
        .build()
        .unwrap();
    let b = builder(store.clone(), &clock).single_node(false).tool(returning("t", json!({}))).build().unwrap();
    let id = claim_and_hold(&a, &mut gate, "t").await;
    clock.advance(Duration::from_secs(30));
    assert_eq!(b.triage_once(TriageScope::ExpiredLeases).await.unwrap().resumed, 1);
    assert_eq!(a.run_due_once().await.unwrap(), 1, "A claims attempt 2");
    gate.arrived().await;
    assert_eq!(a.running(), 2, "both attempts' handlers run here");
    gate.open(1); // attempt 1's handler returns
    eventually("attempt 1's driver ends", || async { a.running() == 1 }).await;
    let r = stored(&store, &id).await;
    assert_eq!(
        (r.attempt, r.lease.is_some(), r.status),
        (2, true, TaskStatus::Working),
        "attempt 1's late result changes nothing"
    );
    a.shutdown(Duration::from_millis(10)).await;
    let r = stored(&store, &id).await;
    assert_eq!((r.attempt, r.lease), (2, None), "shutdown hands attempt 2's lease back, attempt unspent");
}
