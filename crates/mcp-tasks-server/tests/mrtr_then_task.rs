//! An inline front gathers input in the request (MRTR `InputRequiredResult`),
//! then starts the durable task of the same name; the task's result carries
//! the answer. `tools/list` shows the tool once.

use crate::common;
use std::collections::BTreeMap;

use common::*;
use rmcp::model::{CallToolRequestParams, CallToolResponse, TaskPayload};
use serde_json::json;

#[tokio::test]
async fn input_gathered_in_the_request_reaches_the_task() {
    let h = start().await;
    let c = client(&h.url).await;
    let listed = c.list_all_tools().await.unwrap();
    assert_eq!(listed.iter().filter(|t| t.name == "test_tool_with_task").count(), 1);

    let round1 = call(&c, "test_tool_with_task", json!({})).await.unwrap();
    let CallToolResponse::InputRequired(asked) = round1 else { panic!("{round1:?}") };
    let requests = asked.input_requests.expect("input requests");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["user_name"]);

    let answers = BTreeMap::from([("user_name".to_owned(), json!({"action": "accept", "content": {"name": "Ada"}}))]);
    let params = CallToolRequestParams::new("test_tool_with_task").with_input_responses(answers);
    let CallToolResponse::Task(created) = c.call_tool_once(params).await.unwrap() else { panic!("no task") };
    assert!(!wire(&created).as_object().unwrap().contains_key("requestState"));

    let done = poll_to_end(&c, &created.task.task_id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "Hello, Ada! Your task is done.");
    h.stop().await;
}
