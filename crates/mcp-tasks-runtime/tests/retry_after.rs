//! A tool's retry-after re-runs it later without consuming an attempt.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::ToolFailure;
use serde_json::json;
use support::*;

#[tokio::test]
async fn retry_after_does_not_consume_an_attempt() {
    let clock = clock();
    let tool = FnTool::new("snoozer", |ctx| async move {
        // Snooze on the first two runs; the attempt number never moves.
        if ctx.now() < T0.plus(Duration::from_secs(10)) {
            Err(ToolFailure::retry_after(Duration::from_secs(5)))
        } else {
            Ok(json!({"attempt": ctx.attempt()}))
        }
    });
    let rt = builder(memory(), &clock).tool(tool.clone()).build().unwrap();
    let id = create(&rt, "snoozer").await;

    for round in 0..2 {
        assert_eq!(run_settled(&rt).await, 1);
        let r = rt.get_task(&id, None).await.unwrap().record;
        assert_eq!((r.status, r.attempt), (TaskStatus::Working, 1), "round {round}");
        assert_eq!(r.run_at, Some(clock_now(&clock).plus(Duration::from_secs(5))));
        clock.advance(Duration::from_millis(4999));
        assert_eq!(rt.run_due_once().await.unwrap(), 0, "not before the requested delay");
        clock.advance(Duration::from_millis(1));
    }
    assert_eq!(run_settled(&rt).await, 1);
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Completed);
    assert_eq!(r.result, Some(json!({"attempt": 1})));
    assert_eq!(tool.runs(), 3);
}

fn clock_now(c: &mcp_tasks_core::ManualClock) -> mcp_tasks_core::Timestamp {
    use mcp_tasks_core::Clock;
    c.now()
}
