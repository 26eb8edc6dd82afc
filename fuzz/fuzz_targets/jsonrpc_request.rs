//! The JSON-RPC request path: any body through the check the server's guard
//! runs before rmcp sees it (`mcp_tasks_wire::envelope::check`).
//!
//! Properties: no panic; a refusal carries one of the three codes the
//! check may answer with, a message, and an id a client can match (a string,
//! a 64-bit integer or `null`); `-32602` always names the method; a parse
//! error is only for a body that is not JSON; an accepted body is JSON,
//! and a `tasks/get`, `tasks/cancel` or `tasks/update` request
//! names exactly the `taskId` the body holds; and whatever it accepts of
//! those methods and `tools/call`, rmcp parses too (the check exists so
//! that rmcp never meets a request it would answer wrongly).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_tasks_wire::envelope::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, check};
use rmcp::model::ClientJsonRpcMessage;
use serde::de::IgnoredAny;
use serde_json::Value;

const TASK_METHODS: [&str; 3] = ["tasks/get", "tasks/cancel", "tasks/update"];

/// An id a JSON-RPC answer can carry back.
fn answerable(id: &Value) -> bool {
    id.is_null() || id.is_string() || id.as_i64().is_some()
}

fuzz_target!(|body: &[u8]| {
    match check(body) {
        Ok(checked) => {
            // Valid JSON syntax (numbers beyond f64 included, which a `Value` refuses).
            serde_json::from_slice::<IgnoredAny>(body).expect("an accepted body is JSON");
            assert!(answerable(&checked.id), "{:?}", checked.id);
            let method = checked.method.as_deref();
            if method.is_some_and(|m| TASK_METHODS.contains(&m)) && !checked.id.is_null() {
                let task_id = checked.task_id.as_deref().expect("a tasks request names its task");
                if let Ok(value) = serde_json::from_slice::<Value>(body) {
                    assert_eq!(value["params"]["taskId"].as_str(), Some(task_id));
                }
            } else {
                assert_eq!(checked.task_id, None);
            }
            // What the check lets through for the methods it types, rmcp must
            // parse too: else rmcp would answer a well-typed request wrongly.
            let typed = method.is_some_and(|m| TASK_METHODS.contains(&m) || m == "tools/call");
            if typed
                && !checked.id.is_null()
                && let Err(e) = serde_json::from_slice::<ClientJsonRpcMessage>(body)
            {
                panic!("the check accepts it, rmcp does not: {e}");
            }
        }
        Err(refusal) => {
            assert!([PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS].contains(&refusal.code), "{refusal:?}");
            assert!(!refusal.message.is_empty());
            assert!(answerable(&refusal.id), "{refusal:?}");
            assert_eq!(refusal.code == INVALID_PARAMS, refusal.method.is_some(), "{refusal:?}");
            if refusal.code == PARSE_ERROR {
                assert!(serde_json::from_slice::<Value>(body).is_err(), "valid JSON refused as a parse error");
            }
        }
    }
});
