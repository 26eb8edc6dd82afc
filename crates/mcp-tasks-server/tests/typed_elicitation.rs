//! A durable tool asks for a typed answer (`ctx.elicit::<T>`): the stored
//! question carries the schema derived from `T`, an answer through
//! `tasks/update` comes back to the tool as a `T`, and an answer that does
//! not fit `T`'s schema is refused with -32602 naming the field while the
//! task keeps waiting for a good one.

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
    c.peer()
        .update_task(UpdateTaskParams::new(id.clone(), BTreeMap::from([("approval".to_owned(), answer)])))
        .await
        .unwrap();
    let done = poll_to_end(&c, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "deployed on 3 replicas");

    let declined_id = waiting_deploy(&c).await;
    let answer = json!({"action": "decline"});
    c.peer()
        .update_task(UpdateTaskParams::new(declined_id.clone(), BTreeMap::from([("approval".to_owned(), answer)])))
        .await
        .unwrap();
    let done = poll_to_end(&c, &declined_id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "declined");
    h.stop().await;
}

#[tokio::test]
async fn an_answer_that_does_not_fit_the_type_is_refused_and_the_task_keeps_waiting() {
    let h = start_with(|b| b.task("deploy", "Deploys after approval", deploy)).await;
    let c = client(&h.url).await;
    let id = waiting_deploy(&c).await;

    let bad = json!({"action": "accept", "content": {"approve": "sure", "replicas": 3}});
    let e = c
        .peer()
        .update_task(UpdateTaskParams::new(id.clone(), BTreeMap::from([("approval".to_owned(), bad)])))
        .await
        .map_err(mcp_error)
        .unwrap_err();
    assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("approval") && e.message.contains("/content/approve"), "{}", e.message);
    assert_eq!(get(&c, &id).await.unwrap().task.status(), TaskStatus::InputRequired);

    let good = json!({"action": "accept", "content": {"approve": false, "replicas": 1}});
    c.peer().update_task(UpdateTaskParams::new(id.clone(), BTreeMap::from([("approval".to_owned(), good)]))).await.unwrap();
    let done = poll_to_end(&c, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "not approved");
    h.stop().await;
}
