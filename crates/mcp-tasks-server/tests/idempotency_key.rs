//! A `tools/call` carrying an idempotency key in `_meta` under
//! `dev.mcp-tasks/idempotencyKey` returns the same task when repeated, and a
//! reuse of the key for a different call is refused with -32602.

use crate::common;
use common::*;
use mcp_tasks_server::IDEMPOTENCY_KEY_META_KEY;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorCode, RequestMetaObject};
use serde_json::json;

fn keyed(tool: &str, seconds: u64, key: &str) -> CallToolRequestParams {
    let mut meta = RequestMetaObject::default();
    meta.0.insert(IDEMPOTENCY_KEY_META_KEY.to_owned(), json!(key));
    let mut params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(json!({"seconds": seconds}).as_object().cloned().unwrap());
    params.meta = Some(meta);
    params
}

#[tokio::test]
async fn the_same_key_and_call_return_the_same_task() {
    let h = start().await;
    let c = client(&h.url).await;
    let first = match c.call_tool_once(keyed("slow_compute", 60, "order-17")).await.unwrap() {
        CallToolResponse::Task(t) => t.task.task_id,
        other => panic!("{other:?}"),
    };
    let again = match c.call_tool_once(keyed("slow_compute", 60, "order-17")).await.unwrap() {
        CallToolResponse::Task(t) => t.task.task_id,
        other => panic!("{other:?}"),
    };
    assert_eq!(first, again);

    let e = c.call_tool_once(keyed("slow_compute", 61, "order-17")).await.map_err(mcp_error).unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("order-17"), "{}", e.message);
    h.stop().await;
}
