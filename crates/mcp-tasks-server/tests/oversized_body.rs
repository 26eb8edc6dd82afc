//! A body over the configured limit gets HTTP 413 with a JSON-RPC error
//! naming the limit, and the server keeps serving.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let h = start_with(|b| b.max_body_bytes(4096)).await;
    let big = "x".repeat(10_000);
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "greet", "arguments": {"name": big}, "_meta": request_meta(false)}});
    let (status, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", "tools/call"), ("Mcp-Name", "greet")]).await;
    assert_eq!(status, 413, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("4096"), "{reply}");
    still_serves(&h.url).await;
    h.stop().await;
}
