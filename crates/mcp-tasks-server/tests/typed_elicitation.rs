//! A durable tool asks for a typed answer (`ctx.elicit::<T>`): the stored
//! question carries the schema derived from `T`, an answer through
//! `tasks/update` comes back to the tool as a `T`, and an answer that does
//! not fit `T` fails the task with a message naming the key and the type.

use crate::common;

use common::*;
use mcp_tasks_server::{Elicit, Elicited, TaskContext, ToolFailure};
use rmcp::model::{TaskPayload, TaskStatus, UpdateTaskParams};
use serde_json::json;
use std::collections::BTreeMap;

#[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
struct Approval {
    /// Whether to go ahead.
    approve: bool,
    /// How many replicas.
    replicas: u32,
}

async fn deploy(_: NoArgs, ctx: TaskContext) -> Result<String, ToolFailure> {
    Ok(match ctx.elicit::<Approval>("approval", "Deploy to production?").await? {
        Elicited::Accepted(Approval { approve: true, replicas }) => format!("deployed on {replicas} replicas"),
        Elicited::Accepted(_) => "not approved".to_owned(),
        Elicited::Declined => "declined".to_owned(),
        Elicited::Cancelled => "cancelled".to_owned(),
    })
}

async fn waiting_deploy(c: &Client) -> String {
    let id = create(c, "deploy", json!({})).await.task.task_id;
    let waiting = poll_to_status(c, &id, TaskStatus::InputRequired).await;
    let TaskPayload::InputRequired { input_requests } = &waiting.task.payload else { panic!("{waiting:?}") };
    let request = wire(&input_requests["approval"]);
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Deploy to production?");
    let schema = &request["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["approve"]["type"], "boolean");
    assert_eq!(schema["properties"]["replicas"]["type"], "integer");
    id
}

#[tokio::test]
async fn a_typed_answer_reaches_the_tool_as_its_type() {
    let h = start_with(|b| b.task("deploy", "Deploys after approval", deploy)).await;
    let c = client(&h.url).await;
    let id = waiting_deploy(&c).await;

    let answer = json!({"action": "accept", "content": {"approve": true, "replicas": 3}});
    c.peer().update_task(UpdateTaskParams::new(id.clone(), BTreeMap::from([("approval".to_owned(), answer)]))).await.unwrap();
    let done = poll_to_end(&c, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "deployed on 3 replicas");

    let declined_id = waiting_deploy(&c).await;
    let answer = json!({"action": "decline"});
    c.peer().update_task(UpdateTaskParams::new(declined_id.clone(), BTreeMap::from([("approval".to_owned(), answer)]))).await.unwrap();
    let done = poll_to_end(&c, &declined_id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "declined");
    h.stop().await;
}

#[tokio::test]
async fn an_answer_that_does_not_fit_the_type_fails_the_task_saying_why() {
    let h = start_with(|b| b.task("deploy", "Deploys after approval", deploy)).await;
    let c = client(&h.url).await;
    let id = waiting_deploy(&c).await;

    let answer = json!({"action": "accept", "content": {"approve": "sure", "replicas": 3}});
    c.peer().update_task(UpdateTaskParams::new(id.clone(), BTreeMap::from([("approval".to_owned(), answer)]))).await.unwrap();
    let done = poll_to_end(&c, &id).await;
    assert_eq!(done.task.status(), TaskStatus::Failed, "{done:?}");
    let text = serde_json::to_string(&wire(&done)).unwrap();
    assert!(text.contains("approval") && text.contains("Approval"), "{text}");
    h.stop().await;
}
