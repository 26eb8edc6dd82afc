//! A typed durable tool's arguments are checked against the schema derived
//! from their Rust type before a task is created: a missing field, a wrong
//! type, an out-of-range value and an unknown field (the type denies them)
//! each get -32602 naming the field, for a client that takes tasks and for
//! one that gets the result inline, and no task is created.

use crate::rmcp_app;
use std::time::Duration;

use mcp_tasks_store::ListQuery;
use rmcp::model::{CallToolResponse, ErrorCode};
use rmcp_app::*;
use serde_json::{Value, json};

#[tokio::test]
async fn each_kind_of_schema_violation_is_refused_with_32602_naming_the_field_and_creates_no_task() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = durable_tasks(dir.path());
    tasks.start().await.unwrap();
    let url = serve({
        let tasks = tasks.clone();
        move || tasks.wrap(Notes::new())
    })
    .await;
    let with_tasks = client(&url, true).await;
    let inline = client(&url, false).await;

    // (arguments, the field named, words the message must carry)
    let cases: [(Value, &str, &[&str]); 5] = [
        (json!({"topic": "Q3"}), "sections", &["required"]),
        (json!({"topic": "Q3", "sections": "five"}), "/sections", &["\"five\"", "integer"]),
        (json!({"topic": "Q3", "sections": 50}), "/sections", &["50", "20"]),
        (json!({"topic": "Q3", "sections": 0}), "/sections", &["1"]),
        (json!({"topic": "Q3", "sections": 2, "colour": "red"}), "colour", &[]),
    ];
    for client in [&with_tasks, &inline] {
        for (arguments, field, words) in &cases {
            let e = call(client, "build_report", arguments.clone()).await.expect_err(&format!("{arguments} was accepted"));
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{arguments}: {e:?}");
            assert!(e.message.contains("build_report") && e.message.contains(field), "{arguments}: {}", e.message);
            for word in *words {
                assert!(e.message.contains(word), "{arguments}: {:?} lacks {word:?}", e.message);
            }
            assert_eq!(e.data.as_ref().unwrap()["tool"], "build_report");
        }
    }
    let rows = tasks.runtime().store().list(ListQuery::default()).await.unwrap();
    assert!(rows.is_empty(), "no task was created: {rows:?}");

    // The schema the client sees says the same: required, range, closed.
    let listed = with_tasks.list_all_tools().await.unwrap();
    let schema = wire(&listed.iter().find(|t| t.name == "build_report").unwrap().input_schema);
    assert_eq!(schema["required"], json!(["topic", "sections"]), "{schema}");
    assert_eq!(schema["properties"]["sections"]["maximum"], 20, "{schema}");
    assert_eq!(schema["additionalProperties"], false, "{schema}");

    // Good arguments still make a task.
    match call(&with_tasks, "build_report", json!({"topic": "Q3", "sections": 2})).await.unwrap() {
        CallToolResponse::Task(_) => {}
        other => panic!("expected a task, got {other:?}"),
    }
    assert_eq!(tasks.runtime().store().list(ListQuery::default()).await.unwrap().len(), 1);
    tasks.shutdown(Duration::from_millis(200)).await;
}
