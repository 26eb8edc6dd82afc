//! What a handler anchors on the stored task: `idempotency_key(step)` is the
//! same on every attempt of a task and differs between tasks;
//! `sleep_until(created_at + d)` waits only what is left, so a re-run after
//! the instant has passed (a restart, a retry) does not start the wait again.

use crate::support;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::ToolFailure;
use serde_json::json;
use support::*;

#[tokio::test]
async fn the_idempotency_key_is_stable_across_attempts_and_unique_per_task() {
    let clock = clock();
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    let tool = FnTool::new("charge", move |ctx| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push((ctx.task_id().clone(), ctx.idempotency_key("charge-card")));
            if ctx.attempt() == 1 { Err(ToolFailure::new("payment gateway timed out")) } else { Ok(json!({})) }
        }
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let first = create(&rt, "charge").await;
    let second = create(&rt, "charge").await;
    run_settled(&rt).await;
    clock.advance(Duration::from_secs(10)); // past either retry's backoff
    run_settled(&rt).await;
    assert_eq!(status(&rt, &first).await, TaskStatus::Completed);

    let keys = keys.lock().unwrap().clone();
    let of = |id| keys.iter().filter(|(t, _)| *t == id).map(|(_, k)| k.clone()).collect::<Vec<_>>();
    let (a, b) = (of(first.clone()), of(second.clone()));
    assert_eq!(a.len(), 2, "two attempts: {keys:?}");
    assert_eq!(a[0], a[1], "the same key on every attempt");
    assert_ne!(a[0], b[0], "another task, another key");
    assert!(a[0].contains(first.as_str()) && a[0].ends_with("charge-card"), "{}", a[0]);
}

#[tokio::test]
async fn sleep_until_a_stored_instant_waits_only_what_is_left() {
    let clock = clock();
    let tool = FnTool::new("cool_down", |ctx| async move {
        ctx.sleep_until(ctx.created_at().plus(Duration::from_secs(3600))).await?;
        Ok(json!({"slept_until": ctx.now().as_millis()}))
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "cool_down").await;
    // The hour passed while nothing ran it (a restart, a queue): the handler
    // must not wait another hour. A bound, not a timing: a bug hangs for 1 h.
    clock.advance(Duration::from_secs(7200));
    let ran = tokio::time::timeout(Duration::from_secs(30), run_settled(&rt)).await;
    assert_eq!(ran.expect("the handler did not wait again"), 1);
    assert_eq!(status(&rt, &id).await, TaskStatus::Completed);
}
