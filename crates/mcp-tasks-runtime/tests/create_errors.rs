//! Creation errors name what was wrong: an unknown tool (listing the known
//! ones) and an idempotency key reused for another call.

use crate::support;
use mcp_tasks_runtime::{CreateTask, RuntimeError};
use serde_json::json;
use support::*;

#[tokio::test]
async fn unknown_tool_names_it_and_lists_the_known_ones() {
    let clock = clock();
    let rt =
        builder(memory(), &clock).tool(returning("beta", json!({}))).tool(returning("alpha", json!({}))).build().unwrap();
    let e = rt.create_task(CreateTask::new("gamma", json!({}))).await.unwrap_err();
    assert_eq!(e, RuntimeError::UnknownTool { tool: "gamma".into(), known: vec!["alpha".into(), "beta".into()] });
    assert!(e.to_string().contains("\"gamma\"") && e.to_string().contains("alpha, beta"), "{e}");
}

#[tokio::test]
async fn idempotency_keys_return_the_same_task_or_a_conflict() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let req = |args| CreateTask { idempotency_key: Some("k1".into()), ..CreateTask::new("t", args) };
    let first = rt.create_task(req(json!({"a": 1}))).await.unwrap().record.id;
    let again = rt.create_task(req(json!({"a": 1}))).await.unwrap().record.id;
    assert_eq!(first, again);
    let e = rt.create_task(req(json!({"a": 2}))).await.unwrap_err();
    assert_eq!(e, RuntimeError::IdempotencyConflict { key: "k1".into() });
    assert!(e.to_string().contains("different tool call"), "{e}");
}

#[tokio::test]
async fn an_invalid_policy_or_duplicate_tool_is_refused_at_build() {
    let clock = clock();
    let mut policy = mcp_tasks_core::Policy::default();
    policy.retry.max_attempts = 0;
    let e = builder(memory(), &clock).policy(policy).build().unwrap_err();
    assert!(matches!(&e, RuntimeError::InvalidPolicy(m) if m.contains("max_attempts")), "{e}");
    let e = builder(memory(), &clock).tool(returning("t", json!({}))).tool(returning("t", json!({}))).build().unwrap_err();
    assert_eq!(e, RuntimeError::DuplicateTool("t".into()));
    let e = builder(memory(), &clock).concurrency(0).build().unwrap_err();
    assert!(e.to_string().contains("concurrency"));
}
