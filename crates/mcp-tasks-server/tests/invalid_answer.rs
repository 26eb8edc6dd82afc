//! An answer that does not match the requested schema is refused with
//! -32602 naming the input key and the field; the question stays open, and
//! a good answer afterwards is taken and the task completes.

use crate::common;
use std::collections::BTreeMap;

use common::*;
use rmcp::model::{ErrorCode, TaskPayload, TaskStatus, UpdateTaskParams};
use serde_json::{Value, json};

fn answer(content: Value) -> BTreeMap<String, Value> {
    BTreeMap::from([("confirm".to_owned(), json!({"action": "accept", "content": content}))])
}

#[tokio::test]
async fn a_bad_answer_is_refused_and_the_question_stays_open() {
    let h = start().await;
    let c = client(&h.url).await;
    let id = create(&c, "confirm_delete", json!({"filename": "notes.txt"})).await.task.task_id;
    poll_to_status(&c, &id, TaskStatus::InputRequired).await;

    let bad = c.peer().update_task(UpdateTaskParams::new(id.clone(), answer(json!({"confirm": "banana"})))).await;
    let e = mcp_error(bad.unwrap_err());
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("\"confirm\"") && e.message.contains("/content/confirm"), "{}", e.message);
    assert!(e.message.contains("boolean"), "{}", e.message);
    let data = e.data.unwrap();
    assert_eq!(
        (data["inputKey"].as_str(), data["errors"][0]["pointer"].as_str()),
        (Some("confirm"), Some("/content/confirm"))
    );

    let unknown_action = BTreeMap::from([("confirm".to_owned(), json!({"action": "maybe"}))]);
    let e = mcp_error(c.peer().update_task(UpdateTaskParams::new(id.clone(), unknown_action)).await.unwrap_err());
    assert!(e.message.contains("/action"), "{}", e.message);

    // Still waiting, nothing stored.
    let still = get(&c, &id).await.unwrap();
    assert_eq!(still.task.status(), TaskStatus::InputRequired);
    let record = h.server.runtime().store().get(&mcp_tasks_core::TaskId(id.clone())).await.unwrap().unwrap();
    assert!(record.input_responses.is_empty(), "{:?}", record.input_responses);

    c.peer().update_task(UpdateTaskParams::new(id.clone(), answer(json!({"confirm": true})))).await.unwrap();
    let done = poll_to_end(&c, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "Deleted notes.txt");
    h.stop().await;
}
