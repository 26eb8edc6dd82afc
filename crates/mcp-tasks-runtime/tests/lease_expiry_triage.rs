//! A lapsed lease is triaged by another instance: the task resumes there as
//! the next attempt, and the first executor's late result changes nothing.

mod common;

use std::time::Duration;

use common::*;
use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{TriageReport, TriageScope};
use serde_json::json;

#[tokio::test]
async fn a_lapsed_lease_is_resumed_elsewhere() {
    let clock = clock();
    let store = memory();
    let (g, mut gate) = gate();
    let stalled = builder(store.clone(), &clock)
        .tool(FnTool::new("t", move |ctx| {
            let g = g.clone();
            async move {
                g.pass_stubbornly(&ctx).await;
                Ok(json!({"by": "stalled"}))
            }
        }))
        .build()
        .unwrap();
    let healthy = builder(store.clone(), &clock)
        .tool(FnTool::new("t", |ctx| async move { Ok(json!({"by": "healthy", "attempt": ctx.attempt()})) }))
        .build()
        .unwrap();
    let id = create(&stalled, "t").await;
    stalled.run_due_once().await.unwrap();
    gate.arrived().await;

    assert_eq!(healthy.triage_once(TriageScope::ExpiredLeases).await.unwrap(), TriageReport::default(), "lease still valid");
    clock.advance(Duration::from_millis(29_999));
    assert_eq!(healthy.triage_once(TriageScope::ExpiredLeases).await.unwrap(), TriageReport::default());
    clock.advance(Duration::from_millis(1)); // the 30 s lease lapses (inclusive)
    assert_eq!(healthy.triage_once(TriageScope::ExpiredLeases).await.unwrap().resumed, 1);
    let r = store.get(&id).await.unwrap().unwrap();
    assert_eq!((r.status, r.attempt, r.lease), (TaskStatus::Working, 2, None));

    assert_eq!(healthy.run_due_once().await.unwrap(), 1);
    idle(&healthy).await;
    let done = store.get(&id).await.unwrap().unwrap();
    assert_eq!(done.result, Some(json!({"by": "healthy", "attempt": 2})));

    gate.open(1); // the stalled executor wakes up and reports
    idle(&stalled).await;
    assert_eq!(store.get(&id).await.unwrap().unwrap(), done, "its late result changed nothing");
}

#[tokio::test]
async fn a_cancel_requested_task_whose_executor_died_ends_cancelled() {
    let clock = clock();
    let store = memory();
    let (g, mut gate) = gate();
    let dying = builder(store.clone(), &clock)
        .tool(FnTool::new("t", move |ctx| {
            let g = g.clone();
            async move {
                g.pass_stubbornly(&ctx).await;
                Ok(json!({}))
            }
        }))
        .build()
        .unwrap();
    let front = builder(store.clone(), &clock).build().unwrap();
    let id = create(&dying, "t").await;
    dying.run_due_once().await.unwrap();
    gate.arrived().await;
    assert!(front.cancel_task(&id, None).await.unwrap().record.cancel_requested);
    clock.advance(Duration::from_secs(30));
    assert_eq!(front.triage_once(TriageScope::ExpiredLeases).await.unwrap().cancelled, 1);
    assert_eq!(store.get(&id).await.unwrap().unwrap().status, TaskStatus::Cancelled);
}
