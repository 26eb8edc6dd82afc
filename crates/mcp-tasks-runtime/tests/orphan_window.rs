//! The orphan window is inclusive: a task unpolled for exactly the window
//! is cancelled, one polled a millisecond later is not. Buffered polls are
//! flushed before the sweep reads.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use serde_json::json;
use support::*;

#[tokio::test]
async fn orphan_cancel_is_inclusive_at_exactly_the_window() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let silent = create(&rt, "t").await;
    clock.advance(Duration::from_millis(1));
    let polled = create(&rt, "t").await;

    clock.advance(Duration::from_millis(899_998)); // T0 + 899.999 s
    rt.get_task(&polled, None).await.unwrap(); // buffered, not yet written
    assert_eq!(rt.reap_once().await.unwrap().orphaned, 0, "one millisecond short of the window");

    clock.advance(Duration::from_millis(1)); // exactly 900 s after `silent` was created
    let report = rt.reap_once().await.unwrap();
    assert_eq!(report.orphaned, 1);
    let r = rt.store().get(&silent).await.unwrap().unwrap();
    assert_eq!(r.status, TaskStatus::Cancelled);
    assert!(r.status_message.unwrap().contains("no client polled"));
    assert_eq!(status(&rt, &polled).await, TaskStatus::Working, "its poll was flushed before the sweep");
}

#[tokio::test]
async fn a_fresh_runtime_does_not_read_lost_polls_as_abandonment() {
    let clock = clock();
    let store = memory();
    let mut policy = mcp_tasks_core::Policy::default();
    policy.retention.max_execution = Duration::from_secs(7200); // keep the deadline out of the way
    let first = builder(store.clone(), &clock).policy(policy.clone()).tool(returning("t", json!({}))).build().unwrap();
    let id = create(&first, "t").await;
    clock.advance(Duration::from_secs(800));
    first.get_task(&id, None).await.unwrap(); // lost: the process "dies" before flushing
    drop(first);

    clock.advance(Duration::from_secs(200)); // 1000 s since creation, 200 s since the lost poll
    let second = builder(store, &clock).policy(policy).tool(returning("t", json!({}))).build().unwrap();
    assert_eq!(second.reap_once().await.unwrap().orphaned, 0, "silence is measured from this runtime's start");
    clock.advance(Duration::from_secs(899));
    assert_eq!(second.reap_once().await.unwrap().orphaned, 0);
    clock.advance(Duration::from_secs(1));
    assert_eq!(second.reap_once().await.unwrap().orphaned, 1, "a full window watched by this runtime");
}
