//! A declaring client's call becomes a durable task: CreateTaskResult with
//! honest fields, an immediate `tasks/get` resolves, polling reaches the result.

use crate::common;
use common::*;
use mcp_tasks_server::ORPHAN_WINDOW_META_KEY;
use rmcp::model::{TaskPayload, TaskStatus};
use serde_json::json;

#[tokio::test]
async fn a_call_becomes_a_task_that_polls_to_its_result() {
    let h = start().await;
    let c = client(&h.url).await;

    let created = create(&c, "slow_compute", json!({"ms": 50, "label": "answer"})).await;
    let w = wire(&created);
    assert_eq!(w["resultType"], "task");
    assert_eq!(w["status"], "working");
    assert!(w["ttlMs"].as_u64().is_some_and(|t| t > 0), "{w}");
    assert!(w["pollIntervalMs"].as_u64().is_some_and(|t| t > 0), "{w}");
    let orphan_ms = h.server.runtime().policy().retention.orphan_after.as_millis() as u64;
    assert_eq!(w["_meta"][ORPHAN_WINDOW_META_KEY], json!(orphan_ms), "{w}");
    let id = created.task.task_id.clone();
    assert_eq!(id.len(), 36, "a UUID v4: 122 random bits");

    // Durable before the answer: the very next get resolves.
    let first = get(&c, &id).await.unwrap();
    assert_eq!(first.task.task.task_id, id);

    let done = poll_to_end(&c, &id).await;
    assert_eq!(done.task.status(), TaskStatus::Completed);
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "answer: computed in 50 ms");
    assert_eq!(wire(&done)["_meta"][ORPHAN_WINDOW_META_KEY], json!(orphan_ms));

    // Still there afterwards, unchanged.
    let again = get(&c, &id).await.unwrap();
    assert_eq!(wire(&again.task), wire(&done.task));
    h.stop().await;
}
