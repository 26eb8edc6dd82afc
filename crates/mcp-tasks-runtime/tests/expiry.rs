//! Expiry deletes a terminal task after its retention and releases its
//! idempotency key.

use crate::support;
use std::time::Duration;

use mcp_tasks_runtime::{CreateTask, RuntimeError};
use serde_json::json;
use support::*;

#[tokio::test]
async fn expiry_deletes_and_releases_the_idempotency_key() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({"v": 1}))).build().unwrap();
    let req = |args| CreateTask { idempotency_key: Some("key".into()), ..CreateTask::new("t", args) };
    let id = rt.create_task(req(json!({"a": 1}))).await.unwrap().record.id;
    run_settled(&rt).await;
    assert!(matches!(rt.create_task(req(json!({"a": 2}))).await, Err(RuntimeError::IdempotencyConflict { .. })));

    clock.advance(Duration::from_millis(3_599_999));
    assert_eq!(rt.reap_once().await.unwrap().expired, 0, "kept for the full hour");
    clock.advance(Duration::from_millis(1));
    assert_eq!(rt.reap_once().await.unwrap().expired, 1);
    assert_eq!(rt.get_task(&id, None).await.unwrap_err(), RuntimeError::TaskNotFound(id.clone()));

    let reused = rt.create_task(req(json!({"a": 2}))).await.unwrap().record.id;
    assert_ne!(reused, id, "the key is free again");
}
