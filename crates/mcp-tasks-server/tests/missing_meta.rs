//! A request without the per-request `_meta` gets HTTP 400 with -32602, and
//! the server keeps serving.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn a_request_without_meta_is_invalid_params() {
    let h = start().await;
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}});
    let (status, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", "tools/list")]).await;
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["id"], 5);
    still_serves(&h.url).await;
    h.stop().await;
}
