//! The poll hint follows the tool's duration: declared, or learned from the
//! median of recent completions (refreshed at most every 30 s).

use crate::support;
use std::time::Duration;

use serde_json::json;
use support::*;

#[tokio::test]
async fn the_hint_is_learned_from_history() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("report", json!({}))).build().unwrap();
    let first = rt.create_task(mcp_tasks_runtime::CreateTask::new("report", json!({}))).await.unwrap();
    assert_eq!(first.poll_interval_ms, 1000, "unknown duration: the policy's default");

    // Three completions taking 50 s, 60 s and 100 s: median 60 s → 2 % = 1.2 s.
    for secs in [50, 60, 100] {
        let _ = create(&rt, "report").await;
        clock.advance(Duration::from_secs(secs));
        run_settled(&rt).await;
    }
    // Durations: 50 s (the first task, done in round one), 50, 60, 100 → median 55 s → 1.1 s.
    let learned = rt.get_task(&first.record.id, None).await.unwrap();
    assert_eq!(learned.poll_interval_ms, 1100);

    // A slow run: the cached value holds for 30 s, then the median moves to 60 s.
    let slow = create(&rt, "report").await;
    clock.advance(Duration::from_secs(1000));
    assert_eq!(rt.get_task(&slow, None).await.unwrap().poll_interval_ms, 1100, "refreshed before it completes");
    run_settled(&rt).await;
    assert_eq!(rt.get_task(&slow, None).await.unwrap().poll_interval_ms, 1100, "cached");
    clock.advance(Duration::from_secs(30));
    assert_eq!(rt.get_task(&slow, None).await.unwrap().poll_interval_ms, 1200, "refreshed: median of 50, 50, 60, 100, 1000");
}
