//! Input requests go only to a client that declared it can answer them
//! (SEP-2322): an elicitation is never sent to a client that did not
//! declare `elicitation` — not in a multi-round-trip answer, not in a
//! durable task's `tasks/get`.

use crate::common;
use common::*;
use serde_json::{Value, json};

/// A raw request with `capabilities` declared.
async fn send(url: &str, method: &str, name: &str, params: Value, capabilities: Value) -> Value {
    let mut params = params;
    params["_meta"] = request_meta(false);
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, reply) = post_raw(url, body.to_string(), &[("Mcp-Method", method), ("Mcp-Name", name)]).await;
    // rmcp answers -32021 with HTTP 400, everything else here with 200.
    let expected = if reply["error"]["code"] == -32021 { 400 } else { 200 };
    assert_eq!(status, expected, "{reply}");
    reply
}

fn methods(requests: &Value) -> Vec<&str> {
    let mut m: Vec<&str> =
        requests.as_object().map(|r| r.values().filter_map(|q| q["method"].as_str()).collect()).unwrap_or_default();
    m.sort_unstable();
    m
}

#[tokio::test]
async fn a_round_asks_only_for_what_the_client_declared() {
    let h = start().await;
    let tool = "test_input_required_result_capabilities";
    let call = json!({"name": tool, "arguments": {}});

    let all = send(&h.url, "tools/call", tool, call.clone(), json!({"elicitation": {}, "sampling": {}, "roots": {}})).await;
    assert_eq!(methods(&all["result"]["inputRequests"]), ["elicitation/create", "roots/list", "sampling/createMessage"]);

    let sampling_only = send(&h.url, "tools/call", tool, call.clone(), json!({"sampling": {}})).await;
    assert_eq!(methods(&sampling_only["result"]["inputRequests"]), ["sampling/createMessage"], "{sampling_only}");

    // Nothing it could ask: -32021 naming what it needs, no request sent.
    let none = send(&h.url, "tools/call", tool, call, json!({})).await;
    assert_eq!(none["error"]["code"], -32021, "{none}");
    assert!(none["error"]["data"]["requiredCapabilities"]["elicitation"].is_object(), "{none}");
    assert!(none.get("result").is_none());
    h.stop().await;
}

#[tokio::test]
async fn a_task_s_elicitation_reaches_only_a_client_that_declared_elicitation() {
    let h = start().await;
    let tasks = json!({"io.modelcontextprotocol/tasks": {}});
    let call = json!({"name": "confirm_delete", "arguments": {"filename": "notes.txt"}});
    let created = send(&h.url, "tools/call", "confirm_delete", call, json!({"extensions": tasks})).await;
    let id = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();

    // Poll as a client that declared elicitation until the question is asked.
    let with = json!({"extensions": tasks, "elicitation": {}});
    let asked = loop {
        let got = send(&h.url, "tasks/get", &id, json!({"taskId": id}), with.clone()).await;
        if got["result"]["status"] == "input_required" {
            break got;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    assert_eq!(methods(&asked["result"]["inputRequests"]), ["elicitation/create"]);

    // The same task polled without `elicitation`: never the elicitation.
    let without = send(&h.url, "tasks/get", &id, json!({"taskId": id}), json!({"extensions": tasks})).await;
    assert!(!without.to_string().contains("elicitation/create"), "{without}");
    assert_eq!(without["error"]["code"], -32021, "{without}");
    assert!(without["error"]["data"]["requiredCapabilities"]["elicitation"].is_object(), "{without}");
    h.stop().await;
}
