//! A task that keeps failing transiently is poison once out of attempts: it
//! ends `failed` with a JSON-RPC error and is dead-lettered.

use crate::common;
use common::*;
use mcp_tasks_core::TaskId;
use rmcp::model::{TaskPayload, TaskStatus};
use serde_json::json;

#[tokio::test]
async fn attempts_run_out_and_the_task_is_dead_lettered() {
    let h = start().await;
    let c = client(&h.url).await;
    let id = create(&c, "flaky_upstream", json!({"failures": 99, "ms": 0})).await.task.task_id;

    let end = poll_to_end(&c, &id).await;
    assert_eq!(end.task.status(), TaskStatus::Failed);
    let TaskPayload::Failed { error } = &end.task.payload else { panic!("{end:?}") };
    assert!(error["code"].is_i64(), "{error:?}");
    assert!(error["message"].as_str().unwrap().contains("503"), "{error:?}");

    let letter = h.server.runtime().dead_letters().show(&TaskId(id.clone())).await.unwrap();
    assert_eq!(letter.attempts, 3);
    assert_eq!(letter.tool, "flaky_upstream");
    h.stop().await;
}
