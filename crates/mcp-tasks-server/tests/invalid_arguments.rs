//! Arguments are checked against the tool's input schema before anything is
//! queued: a wrong type, a missing required field — for a task tool and a
//! tool run inline for a client without the tasks extension — get -32602
//! naming the field and what was expected, and no task; a synchronous rmcp
//! tool of the wrapped handler answers as rmcp does.

use crate::common;
use common::*;
use mcp_tasks_store::ListQuery;
use rmcp::model::{CallToolResponse, ErrorCode};
use serde_json::{Value, json};

/// Calls `tool` with `arguments` and returns the -32602 it must get.
async fn refused(client: &Client, tool: &str, arguments: Value) -> rmcp::model::ErrorData {
    let e = call(client, tool, arguments.clone()).await.expect_err(&format!("{tool} {arguments} was accepted"));
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
    e
}

#[tokio::test]
async fn arguments_that_do_not_match_the_schema_are_refused_and_nothing_is_queued() {
    let h = start().await;
    let tasks = client(&h.url).await;
    let plain = plain_client(&h.url).await;

    // A wrong type, as a task and inline.
    for c in [&tasks, &plain] {
        let e = refused(c, "slow_compute", json!({"seconds": "abc"})).await;
        assert!(e.message.contains("slow_compute") && e.message.contains("/seconds"), "{}", e.message);
        assert!(e.message.contains("\"abc\"") && e.message.contains("number"), "{}", e.message);
        let data = e.data.unwrap();
        assert_eq!(data["tool"], "slow_compute");
        assert_eq!(data["errors"][0]["pointer"], "/seconds");
    }

    // A missing required field.
    let e = refused(&tasks, "confirm_delete", json!({})).await;
    assert!(e.message.contains("/filename") && e.message.contains("required"), "{}", e.message);
    assert_eq!(e.data.unwrap()["errors"][0]["pointer"], "/filename");

    // A synchronous tool: an rmcp `#[tool]` of the wrapped handler, whose
    // decoding failure rmcp answers as a tool error naming what was expected
    // (input validation errors are tool execution errors, SEP-1303).
    match call(&tasks, "greet", json!({"name": 123})).await.unwrap() {
        CallToolResponse::Complete(result) => {
            assert_eq!(result.is_error, Some(true), "{result:?}");
            let text = wire(&result)["content"][0]["text"].as_str().unwrap().to_owned();
            assert!(text.contains("integer `123`") && text.contains("string"), "{text}");
        }
        other => panic!("{other:?}"),
    }

    let rows = h.server.runtime().store().list(ListQuery::default()).await.unwrap();
    assert!(rows.is_empty(), "no task was created: {rows:?}");

    // Good arguments still work.
    match call(&tasks, "greet", json!({"name": "Ada"})).await.unwrap() {
        CallToolResponse::Complete(result) => assert_eq!(wire(&result)["content"][0]["text"], "Hello, Ada!"),
        other => panic!("{other:?}"),
    }
    let id = create(&tasks, "slow_compute", json!({"ms": 5})).await.task.task_id;
    assert!(poll_to_end(&tasks, &id).await.task.status() == rmcp::model::TaskStatus::Completed);
    h.stop().await;
}
