//! An error no marker recognises is permanent by default; an operator can
//! make the default transient.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::{FailureClass, Policy, TaskStatus};
use mcp_tasks_runtime::ToolFailure;
use support::*;

fn widget() -> std::sync::Arc<FnTool> {
    failing("widget", ToolFailure::new("widget subsystem returned E_BADSTATE"))
}

#[tokio::test]
async fn unknown_errors_are_permanent_by_default() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(widget()).build().unwrap();
    let id = create(&rt, "widget").await;
    run_settled(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!((r.status, r.attempt), (TaskStatus::Failed, 1));
}

#[tokio::test]
async fn the_default_class_is_configurable() {
    let clock = clock();
    let mut policy = Policy::default();
    policy.classifier.default_class = FailureClass::Transient;
    let rt = builder(memory(), &clock).policy(policy).tool(widget()).build().unwrap();
    let id = create(&rt, "widget").await;
    run_settled(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!((r.status, r.attempt), (TaskStatus::Working, 2), "retried as transient");
    clock.advance(Duration::from_secs(60));
    run_settled(&rt).await;
    clock.advance(Duration::from_secs(60));
    run_settled(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!((r.status, r.attempt), (TaskStatus::Failed, 3), "poison after the ceiling");
}
