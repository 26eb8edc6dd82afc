//! An unknown method (and the removed `tasks/list`) gets HTTP 404 with
//! -32601, and the server keeps serving.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn unknown_methods_are_not_found() {
    let h = start().await;
    for method in ["no/such_method", "tasks/list", "tasks/result"] {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"_meta": request_meta(true)}});
        let (status, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", method)]).await;
        assert_eq!((status, reply["error"]["code"].as_i64()), (404, Some(-32601)), "{method}: {reply}");
    }
    still_serves(&h.url).await;
    h.stop().await;
}
