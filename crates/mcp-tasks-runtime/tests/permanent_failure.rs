//! A permanent failure fails the task at once, without a dead letter.

use crate::support;
use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::ToolFailure;
use mcp_tasks_store::DeadLetterQuery;
use support::*;

#[tokio::test]
async fn permanent_failure_fails_at_once() {
    let clock = clock();
    let tool = failing("strict", ToolFailure::new("invalid arguments: 'limit' must be an integer"));
    let rt = builder(memory(), &clock).tool(tool.clone()).build().unwrap();
    let id = create(&rt, "strict").await;
    run_settled(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!((r.status, r.attempt), (TaskStatus::Failed, 1));
    let e = r.error.unwrap();
    assert_eq!(e.code, -32603);
    assert_eq!(e.data.unwrap()["class"], "permanent");
    assert!(rt.dead_letters().list(DeadLetterQuery::default()).await.unwrap().is_empty());
    assert_eq!(tool.runs(), 1);
}

#[tokio::test]
async fn a_tool_that_knows_its_failure_is_permanent_overrides_markers() {
    let clock = clock();
    let tool = failing("knows", ToolFailure::permanent("connection refused: the account is closed"));
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "knows").await;
    run_settled(&rt).await;
    assert_eq!(status(&rt, &id).await, TaskStatus::Failed);
}

#[tokio::test]
async fn a_protocol_error_is_written_verbatim() {
    let clock = clock();
    let error = mcp_tasks_core::TaskError {
        code: -32602,
        message: "bad input".into(),
        data: Some(serde_json::json!({"field": "x"})),
    };
    let expected = error.clone();
    let tool = FnTool::new("proto", move |_ctx| {
        let error = error.clone();
        async move { Err::<serde_json::Value, _>(ToolFailure::protocol(error)) }
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "proto").await;
    run_settled(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Failed);
    assert_eq!(r.error, Some(expected));
}

#[tokio::test]
async fn a_panicking_tool_fails_its_task_instead_of_leaking_the_lease() {
    let clock = clock();
    let tool = FnTool::new("panics", |_ctx| async move {
        if true {
            panic!("boom");
        }
        Ok(serde_json::json!({}))
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "panics").await;
    run_settled(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Failed);
    assert!(r.error.unwrap().message.contains("panicked"));
}
