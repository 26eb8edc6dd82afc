//! A `tasks/*` request without the `Mcp-Name` header (as FastMCP's tasks
//! client sends them) is served: the body's `taskId` is authoritative and
//! nothing disagrees with it. A header that disagrees is still -32020, and a
//! `tools/call` without `Mcp-Name` is still refused.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn tasks_requests_without_mcp_name_are_served_and_mismatches_still_refused() {
    let h = start().await;
    let c = client(&h.url).await;
    let task = create(&c, "slow_compute", json!({"seconds": 30})).await;
    let id = task.task.task_id.clone();

    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                     "params": {"taskId": id, "_meta": request_meta(true)}});
    let (status, reply) = post_raw(&h.url, get.to_string(), &[("Mcp-Method", "tasks/get")]).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"]["taskId"], id.as_str(), "{reply}");

    // An unknown id without the header: the task error, not a header error.
    let unknown = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                         "params": {"taskId": "no such task \u{e9}", "_meta": request_meta(true)}});
    let (status, reply) = post_raw(&h.url, unknown.to_string(), &[("Mcp-Method", "tasks/get")]).await;
    assert_eq!((status, reply["error"]["code"].as_i64()), (200, Some(-32602)), "{reply}");

    let (status, reply) =
        post_raw(&h.url, get.to_string(), &[("Mcp-Method", "tasks/get"), ("Mcp-Name", "another-task")]).await;
    assert_eq!((status, reply["error"]["code"].as_i64()), (400, Some(-32020)), "{reply}");

    let cancel = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel",
                        "params": {"taskId": id, "_meta": request_meta(true)}});
    let (status, reply) = post_raw(&h.url, cancel.to_string(), &[("Mcp-Method", "tasks/cancel")]).await;
    assert_eq!(status, 200, "{reply}");
    assert!(reply.get("error").is_none(), "{reply}");

    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "greet", "arguments": {"name": "x"}, "_meta": request_meta(false)}});
    let (status, reply) = post_raw(&h.url, call.to_string(), &[("Mcp-Method", "tools/call")]).await;
    assert_eq!((status, reply["error"]["code"].as_i64()), (400, Some(-32020)), "{reply}");
    h.stop().await;
}
