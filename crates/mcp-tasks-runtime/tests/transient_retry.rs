//! A transient failure is retried after a jittered backoff, the task stays
//! `working` with a status message, and the attempt is counted.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::{TaskStatus, Timestamp};
use mcp_tasks_runtime::ToolFailure;
use serde_json::json;
use support::*;

#[tokio::test]
async fn transient_failure_is_retried_then_completes() {
    let clock = clock();
    let tool = FnTool::new("flaky", |ctx| async move {
        if ctx.attempt() == 1 {
            Err(ToolFailure::new("upstream timeout after 30s"))
        } else {
            Ok(json!({"attempt": ctx.attempt()}))
        }
    });
    let rt = builder(memory(), &clock).tool(tool.clone()).build().unwrap();
    let id = create(&rt, "flaky").await;

    assert_eq!(run_settled(&rt).await, 1);
    let waiting = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(waiting.status, TaskStatus::Working);
    assert_eq!(waiting.attempt, 2);
    assert_eq!(waiting.lease, None);
    let msg = waiting.status_message.clone().unwrap();
    assert!(msg.starts_with("retrying after transient error (attempt 2 of 3)"), "{msg}");
    assert!(msg.contains("upstream timeout"), "{msg}");
    let run_at = waiting.run_at.unwrap();
    // Full jitter after attempt 1: within [0, 500 ms]; the support builder's
    // fixed jitter seed draws a positive delay, so the backoff is visible.
    assert!(run_at > T0 && run_at <= T0.plus(Duration::from_millis(500)), "{run_at:?}");
    clock.set(Timestamp::from_millis(run_at.as_millis() - 1));
    assert_eq!(rt.run_due_once().await.unwrap(), 0, "not due before its backoff");
    clock.set(run_at);
    assert_eq!(run_settled(&rt).await, 1);
    let done = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result, Some(json!({"attempt": 2})));
    assert_eq!(tool.runs(), 2);
}
