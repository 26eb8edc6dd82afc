//! Wrong routing headers get HTTP 400 with -32020 (header mismatch): an
//! `Mcp-Method` that disagrees with the body, an `Mcp-Name` that disagrees
//! with the `taskId`. The server keeps serving.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn headers_that_disagree_with_the_body_are_rejected() {
    let h = start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": request_meta(false)}});
    let (status, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", "prompts/list")]).await;
    assert_eq!((status, reply["error"]["code"].as_i64()), (400, Some(-32020)), "{reply}");

    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                      "params": {"taskId": "abc", "_meta": request_meta(true)}});
    let (status, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", "tasks/get"), ("Mcp-Name", "xyz")]).await;
    assert_eq!((status, reply["error"]["code"].as_i64()), (400, Some(-32020)), "{reply}");
    still_serves(&h.url).await;
    h.stop().await;
}
