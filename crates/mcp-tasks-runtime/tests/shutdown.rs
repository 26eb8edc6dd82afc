//! Shutdown lets handlers finish within the grace period, then hands the
//! rest back without spending an attempt, so the next start resumes them at once.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::{Clock, TaskStatus};
use mcp_tasks_runtime::RuntimeError;
use serde_json::json;
use support::*;

#[tokio::test]
async fn shutdown_releases_stubborn_handlers_without_spending_an_attempt() {
    let (_dir, path) = sqlite_file();
    let clock = clock();
    let (first, _gate, id) = stalled(&sqlite(&path), &clock, json!({"by": "first"})).await;
    clock.advance(Duration::from_secs(3));

    first.shutdown(Duration::from_millis(20)).await;
    assert_eq!(first.running(), 0);
    let r = stored(first.store(), &id).await;
    assert_eq!((r.status, r.attempt, r.lease.clone(), r.run_at), (TaskStatus::Working, 1, None, Some(clock.now())));
    assert!(r.status_message.unwrap().contains("shutdown"));
    assert_eq!(
        first.create_task(mcp_tasks_runtime::CreateTask::new("t", json!({}))).await.unwrap_err(),
        RuntimeError::ShuttingDown
    );
    assert_eq!(first.run_due_once().await.unwrap(), 0, "no claims after shutdown");

    let second = builder(sqlite(&path), &clock)
        .single_node(true)
        .tool(FnTool::new("t", |ctx| async move { Ok(json!({"attempt": ctx.attempt()})) }))
        .build()
        .unwrap();
    assert_eq!(second.triage_once(mcp_tasks_runtime::TriageScope::AllLeases).await.unwrap().resumed, 0, "nothing leased");
    assert_eq!(run_settled(&second).await, 1, "due at once");
    let r = stored(second.store(), &id).await;
    assert_eq!((r.status, r.result), (TaskStatus::Completed, Some(json!({"attempt": 1}))));
}

#[tokio::test]
async fn shutdown_waits_for_a_handler_that_finishes_within_grace() {
    let clock = clock();
    let (rt, gate, id) = stalled(&memory(), &clock, json!({"finished": true})).await;
    gate.open(1);
    rt.shutdown(Duration::from_secs(10)).await;
    assert_eq!(status(&rt, &id).await, TaskStatus::Completed);
}
