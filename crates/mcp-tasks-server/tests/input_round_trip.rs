//! A task that asks for input shows `input_required` with its request; the
//! answer through `tasks/update` resumes it to the result. Answers to unknown
//! keys are ignored.

use crate::common;
use std::collections::BTreeMap;

use common::*;
use rmcp::model::{TaskPayload, TaskStatus, UpdateTaskParams};
use serde_json::json;

#[tokio::test]
async fn an_input_request_is_answered_and_the_task_completes() {
    let h = start().await;
    let c = client(&h.url).await;
    let id = create(&c, "confirm_delete", json!({"filename": "notes.txt"})).await.task.task_id;

    let waiting = poll_to_status(&c, &id, TaskStatus::InputRequired).await;
    let TaskPayload::InputRequired { input_requests } = &waiting.task.payload else { panic!("{waiting:?}") };
    let request = wire(&input_requests["confirm"]);
    assert_eq!(request["method"], "elicitation/create");
    assert!(request["params"]["message"].as_str().unwrap().contains("notes.txt"));

    // Unknown keys are ignored: still waiting.
    let stray = BTreeMap::from([("nope".to_owned(), json!({"action": "accept", "content": {}}))]);
    c.peer().update_task(UpdateTaskParams::new(id.clone(), stray)).await.unwrap();
    assert_eq!(get(&c, &id).await.unwrap().task.status(), TaskStatus::InputRequired);

    let answer = BTreeMap::from([("confirm".to_owned(), json!({"action": "accept", "content": {"confirm": true}}))]);
    c.peer().update_task(UpdateTaskParams::new(id.clone(), answer)).await.unwrap();
    let done = poll_to_end(&c, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "Deleted notes.txt");
    h.stop().await;
}
