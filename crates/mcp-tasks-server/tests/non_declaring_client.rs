//! A client that did not declare the tasks extension never gets a task:
//! task-optional tools answer inline, task-required ones get -32021 naming
//! the extension, and `tasks/*` are refused with -32021.

use crate::common;
use common::*;
use rmcp::model::{CallToolResponse, ErrorCode};
use serde_json::json;

#[tokio::test]
async fn no_task_is_returned_to_a_client_that_cannot_take_one() {
    let h = start().await;
    let c = plain_client(&h.url).await;

    match call(&c, "slow_compute", json!({"ms": 20, "label": "inline"})).await.unwrap() {
        CallToolResponse::Complete(result) => {
            assert_eq!(wire(&result)["content"][0]["text"], "inline: computed in 20 ms");
        }
        other => panic!("expected an inline result, got {other:?}"),
    }

    let e = call(&c, "failing_job", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    assert!(e.data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object());

    let e = get(&c, "anything").await.unwrap_err();
    assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    h.stop().await;
}
