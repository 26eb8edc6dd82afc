//! A `taskId` of the wrong JSON type gets -32602 naming the problem (rmcp
//! alone answers -32601), and the server keeps serving.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn a_numeric_task_id_is_invalid_params() {
    let h = start().await;
    for (method, params) in [
        ("tasks/get", json!({"taskId": 42})),
        ("tasks/cancel", json!({"taskId": null})),
        ("tasks/update", json!({"taskId": ["a"], "inputResponses": {}})),
    ] {
        let mut params = params;
        params["_meta"] = request_meta(true);
        let body = json!({"jsonrpc": "2.0", "id": 8, "method": method, "params": params});
        let (status, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", method), ("Mcp-Name", "42")]).await;
        assert_eq!((status, reply["error"]["code"].as_i64()), (400, Some(-32602)), "{method}: {reply}");
        assert_eq!(reply["id"], 8);
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(method) && message.contains("invalid type"), "{message}");
    }
    still_serves(&h.url).await;
    h.stop().await;
}
