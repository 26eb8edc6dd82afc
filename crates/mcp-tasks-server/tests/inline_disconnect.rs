//! A client that cannot take a task gets a task-optional tool's result
//! inline; if it goes away before the result, the task behind the call is
//! cancelled rather than left running for nobody.

use crate::common;
use std::time::Duration;

use std::sync::Arc;

use common::*;
use mcp_tasks_core::{TaskId, TaskStatus};
use mcp_tasks_server::IDEMPOTENCY_KEY_META_KEY;
use mcp_tasks_store::{ListQuery, TaskStore};
use rmcp::model::{CallToolRequestParams, CallToolResponse, RequestMetaObject};
use serde_json::json;

/// Sends an inline (non-task) `slow_compute` call and gives up on it after
/// 300 ms, as a client that goes away would.
async fn vanishing_inline_call(url: &str, seconds: u64, idempotency_key: Option<&str>) {
    let mut meta = request_meta(false);
    if let Some(key) = idempotency_key {
        meta[IDEMPOTENCY_KEY_META_KEY] = json!(key);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "slow_compute", "arguments": {"seconds": seconds}, "_meta": meta}});
    let gone = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "slow_compute")
        .timeout(Duration::from_millis(300))
        .body(body.to_string())
        .send()
        .await;
    assert!(gone.is_err(), "the call should still be running when the client gives up");
}

/// Waits (bounded) until `id` is cancelled.
async fn until_cancelled(store: &Arc<dyn TaskStore>, id: &TaskId) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = store.get(id).await.unwrap().expect("the task exists").status;
        if status == TaskStatus::Cancelled {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "still {status:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_vanished_inline_caller_cancels_its_task() {
    let h = start().await;
    vanishing_inline_call(&h.url, 60, None).await;
    let store = h.server.runtime().store().clone();
    let tasks = store.list(ListQuery { limit: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    until_cancelled(&store, &tasks[0].id).await;
    still_serves(&h.url).await;
    h.stop().await;
}

/// An inline call whose idempotency key names a task someone else holds a
/// handle to joins that task; going away must not cancel it.
#[tokio::test]
async fn a_vanished_inline_caller_never_cancels_a_task_it_joined() {
    let h = start().await;
    let c = client(&h.url).await;
    let mut meta = RequestMetaObject::default();
    meta.0.insert(IDEMPOTENCY_KEY_META_KEY.to_owned(), json!("shared-17"));
    let mut params = CallToolRequestParams::new("slow_compute".to_owned())
        .with_arguments(json!({"seconds": 60}).as_object().cloned().unwrap());
    params.meta = Some(meta);
    let held = match c.call_tool_once(params).await.unwrap() {
        CallToolResponse::Task(t) => TaskId(t.task.task_id),
        other => panic!("expected a task, got {other:?}"),
    };

    vanishing_inline_call(&h.url, 60, Some("shared-17")).await;
    // A second, unkeyed caller vanishes after the first: once its own task is
    // cancelled, the server has acted on both disconnects.
    vanishing_inline_call(&h.url, 61, None).await;
    let store = h.server.runtime().store().clone();
    let tasks = store.list(ListQuery { limit: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!(tasks.len(), 2, "the keyed inline call joined the held task: {tasks:?}");
    let own = tasks.iter().find(|t| t.id != held).expect("the unkeyed call's task");
    until_cancelled(&store, &own.id).await;
    let kept = store.get(&held).await.unwrap().expect("the held task exists");
    assert_eq!(kept.status, TaskStatus::Working, "{kept:?}");
    assert!(!kept.cancel_requested, "the joined task must not be cancelled");
    h.stop().await;
}
