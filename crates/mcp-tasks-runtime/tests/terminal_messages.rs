//! Every terminal transition sets a status message that describes the end:
//! a task never finishes showing its last progress or retry message.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::ToolFailure;
use serde_json::json;
use support::*;

/// Fails transiently on its first attempt, then completes.
fn flaky() -> std::sync::Arc<FnTool> {
    FnTool::new("flaky", |ctx| async move {
        if ctx.attempt() == 1 { Err(ToolFailure::transient("upstream timeout")) } else { Ok(json!({"ok": true})) }
    })
}

async fn message(rt: &mcp_tasks_runtime::Runtime, id: &mcp_tasks_core::TaskId) -> (TaskStatus, String) {
    let r = stored(rt.store(), id).await;
    (r.status, r.status_message.unwrap_or_default())
}

#[tokio::test]
async fn completed_failed_and_cancelled_say_how_they_ended() {
    let clock = clock();
    let rt = builder(memory(), &clock)
        .tool(flaky())
        .tool(failing("broken", ToolFailure::permanent("bad input file")))
        .tool(returning("idle", json!({})))
        .build()
        .unwrap();

    let done = create(&rt, "flaky").await;
    run_settled(&rt).await;
    let (status, retrying) = message(&rt, &done).await;
    assert_eq!(status, TaskStatus::Working);
    assert!(retrying.starts_with("retrying after transient error"), "{retrying}");
    clock.advance(Duration::from_secs(5));
    run_settled(&rt).await;
    assert_eq!(message(&rt, &done).await, (TaskStatus::Completed, "completed".to_owned()));

    let failed = create(&rt, "broken").await;
    run_settled(&rt).await;
    assert_eq!(message(&rt, &failed).await, (TaskStatus::Failed, "bad input file".to_owned()));

    let cancelled = create(&rt, "idle").await;
    rt.cancel_task(&cancelled, None).await.unwrap();
    let (status, text) = message(&rt, &cancelled).await;
    assert_eq!(status, TaskStatus::Cancelled);
    assert!(text.contains("cancelled"), "{text}");
}

#[tokio::test]
async fn the_reapers_terminal_moves_say_how_they_ended() {
    let clock = clock();
    let store = memory();
    // Timed out while waiting to retry.
    let rt = builder(store.clone(), &clock).tool(flaky()).tool(returning("never_run", json!({}))).build().unwrap();
    let retrying = create(&rt, "flaky").await;
    run_settled(&rt).await;
    assert!(message(&rt, &retrying).await.1.starts_with("retrying"));
    // Stuck with a cancel acknowledged (its handler ignores it) past its deadline.
    let (_stuck_rt, _gate, stuck) = stalled(&store, &clock, json!({})).await;
    rt.cancel_task(&stuck, None).await.unwrap();
    assert_eq!(message(&rt, &stuck).await.1, "cancellation requested");

    clock.advance(Duration::from_secs(1800)); // every deadline passes
    let report = rt.reap_once().await.unwrap();
    assert_eq!((report.timed_out, report.orphaned), (2, 0));
    let (status, text) = message(&rt, &retrying).await;
    assert_eq!(status, TaskStatus::Failed);
    assert!(text.contains("timed out"), "{text}");
    let (status, text) = message(&rt, &stuck).await;
    assert_eq!(status, TaskStatus::Cancelled);
    assert!(text.contains("cancelled at the client's request"), "{text}");

    // Orphaned: nobody polled it for the orphan window.
    let fresh = builder(store.clone(), &clock).tool(returning("never_run", json!({}))).build().unwrap();
    let orphan = create(&fresh, "never_run").await;
    clock.advance(orphaned_after());
    assert_eq!(fresh.reap_once().await.unwrap().orphaned, 1);
    let (status, text) = message(&fresh, &orphan).await;
    assert_eq!(status, TaskStatus::Cancelled);
    assert!(text.contains("no client polled"), "{text}");
}
