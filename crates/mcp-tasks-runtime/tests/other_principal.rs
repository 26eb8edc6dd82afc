//! Another principal's task is indistinguishable from a missing one.

use crate::support;
use std::collections::BTreeMap;

use mcp_tasks_core::{TaskId, TaskStatus};
use mcp_tasks_runtime::{CreateTask, RuntimeError};
use serde_json::json;
use support::*;

#[tokio::test]
async fn another_principal_gets_task_not_found() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let req = CreateTask { principal: Some("alice".into()), ..CreateTask::new("t", json!({})) };
    let id = rt.create_task(req).await.unwrap().record.id;

    for who in [Some("mallory"), None] {
        let e = rt.get_task(&id, who).await.unwrap_err();
        assert_eq!(e, RuntimeError::TaskNotFound(id.clone()));
        assert_eq!(rt.cancel_task(&id, who).await.unwrap_err(), RuntimeError::TaskNotFound(id.clone()));
        let answer = BTreeMap::from([("k".to_owned(), json!(1))]);
        assert_eq!(rt.answer_input(&id, who, answer).await.unwrap_err(), RuntimeError::TaskNotFound(id.clone()));
    }
    // Same words as a task that does not exist.
    let ghost = TaskId::from("00000000-0000-4000-8000-000000000000");
    let foreign = rt.get_task(&id, Some("mallory")).await.unwrap_err().to_string().replace(id.as_str(), "ID");
    let missing = rt.get_task(&ghost, Some("mallory")).await.unwrap_err().to_string().replace(ghost.as_str(), "ID");
    assert_eq!(foreign, missing);
    assert!(foreign.contains("ID"));
    // Nothing changed, and the owner still sees it.
    assert_eq!(rt.get_task(&id, Some("alice")).await.unwrap().record.status, TaskStatus::Working);
}
