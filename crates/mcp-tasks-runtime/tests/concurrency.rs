//! The executor runs at most `concurrency` handlers at once.

use crate::support;
use mcp_tasks_core::TaskStatus;
use serde_json::json;
use support::*;

#[tokio::test]
async fn claims_stop_at_the_concurrency_limit() {
    let clock = clock();
    let (g, mut gate) = gate();
    let rt = builder(memory(), &clock).concurrency(2).tool(held("t", &g, json!({}))).build().unwrap();
    let ids = [create(&rt, "t").await, create(&rt, "t").await, create(&rt, "t").await];
    assert_eq!(rt.run_due_once().await.unwrap(), 2);
    assert_eq!(rt.run_due_once().await.unwrap(), 0, "both slots busy");
    gate.arrived().await;
    gate.arrived().await;
    gate.open(1);
    eventually("a slot frees up", || async { rt.running() == 1 }).await;
    assert_eq!(rt.run_due_once().await.unwrap(), 1);
    gate.arrived().await;
    gate.open(2);
    idle(&rt).await;
    for id in &ids {
        assert_eq!(status(&rt, id).await, TaskStatus::Completed);
    }
}
