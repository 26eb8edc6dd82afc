//! JSON-RPC envelopes that are not valid requests get HTTP 400 and -32600
//! naming what is wrong (rmcp alone answers 415 in plain text): an `id` that
//! is null, a boolean, an object, a fraction or beyond 64 bits; a `method`
//! that is missing or not a string. The server keeps serving.

use crate::common;
use common::*;
use serde_json::{Value, json};

async fn refused(h: &Harness, body: String, names: &[&str]) {
    let (status, reply) = post_raw(&h.url, body.clone(), &[("Mcp-Method", "tools/list")]).await;
    assert_eq!(status, 400, "{body}: {reply}");
    assert_eq!(reply["error"]["code"], -32600, "{body}: {reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_else(|| panic!("{body}: {reply}"));
    for name in names {
        assert!(message.contains(name), "{body}: message {message:?} does not name {name:?}");
    }
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
}

#[tokio::test]
async fn bad_ids_and_methods_are_invalid_requests_naming_the_member() {
    let h = start().await;
    let params = json!({"_meta": request_meta(false)});
    for (id, words) in [
        (Value::Null, "null"),
        (json!(true), "a boolean"),
        (json!({"a": 1}), "an object"),
        (json!(1.5), "a fractional number"),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
        refused(&h, body.to_string(), &["\"id\"", words]).await;
    }
    // 2^70: valid JSON, but no JSON-RPC implementation here can echo it exactly.
    let body = format!(r#"{{"jsonrpc":"2.0","id":1180591620717411303424,"method":"tools/list","params":{params}}}"#);
    refused(&h, body, &["\"id\"", "beyond 64 bits"]).await;

    let body = json!({"jsonrpc": "2.0", "id": 5, "params": params});
    refused(&h, body.to_string(), &["\"method\"", "missing"]).await;
    let body = json!({"jsonrpc": "2.0", "id": 6, "method": 42, "params": params});
    refused(&h, body.to_string(), &["\"method\"", "must be a string"]).await;
    // A valid id is echoed even when the method is wrong.
    let (_, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", "tools/list")]).await;
    assert_eq!(reply["id"], 6, "{reply}");

    still_serves(&h.url).await;
    h.stop().await;
}
