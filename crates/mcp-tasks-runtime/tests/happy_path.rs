//! A task runs to `completed`, with its result, retention and hints.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{CreateTask, ToolSpec};
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_task_completes_with_its_result() {
    let clock = clock();
    let mut spec = ToolSpec::new("echo", "echoes");
    spec.expected_duration = Some(Duration::from_secs(60));
    let tool =
        FnTool::with_spec(spec, |ctx| async move { Ok(json!({"echo": ctx.arguments()["x"], "attempt": ctx.attempt()})) });
    let rt = builder(memory(), &clock).tool(tool.clone()).build().unwrap();

    let view = rt.create_task(CreateTask::new("echo", json!({"x": 42}))).await.unwrap();
    assert_eq!(view.record.status, TaskStatus::Working);
    assert_eq!(view.record.attempt, 1);
    assert_eq!(view.ttl_ms, 3_600_000, "a live task promises the shortest retention");
    assert_eq!(view.poll_interval_ms, 1200, "2% of the declared 60 s");
    assert_eq!(view.orphan_window_ms, 900_000);

    clock.advance(Duration::from_secs(5));
    assert_eq!(run_settled(&rt).await, 1);

    let done = rt.get_task(&view.record.id, None).await.unwrap();
    assert_eq!(done.record.status, TaskStatus::Completed);
    assert_eq!(done.record.result, Some(json!({"echo": 42, "attempt": 1})));
    assert_eq!(done.record.terminal_at, Some(support::T0.plus(Duration::from_secs(5))));
    assert_eq!(done.record.lease, None);
    assert_eq!(done.ttl_ms, 3_605_000, "terminal: terminal_at + retention − created_at");
    assert_eq!(tool.runs(), 1);
    assert_eq!(rt.run_due_once().await.unwrap(), 0, "nothing left to claim");
}
