//! A library user gets the schema checks too: arguments that do not match a
//! tool's input schema are refused before anything is stored, and a tool
//! whose declared schema is not a valid JSON Schema fails the build, naming it.

use crate::support;
use mcp_tasks_runtime::{CreateTask, RuntimeError, ToolSpec};
use mcp_tasks_store::ListQuery;
use serde_json::json;
use support::*;

fn spec(schema: serde_json::Value) -> ToolSpec {
    ToolSpec { input_schema: schema, ..ToolSpec::new("sized", "takes a size") }
}

#[tokio::test]
async fn bad_arguments_create_nothing() {
    let clock = clock();
    let store = memory();
    let schema = json!({"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}, "required": ["size"]});
    let tool = FnTool::with_spec(spec(schema), |_ctx| async { Ok(json!({})) });
    let rt = builder(store.clone(), &clock).tool(tool).build().unwrap();

    let e = rt.create_task(CreateTask::new("sized", json!({"size": 0}))).await.unwrap_err();
    let RuntimeError::InvalidArguments { tool, violations } = &e else { panic!("{e}") };
    assert_eq!((tool.as_str(), violations[0].pointer.as_str()), ("sized", "/size"));
    assert!(e.to_string().contains("/size") && e.to_string().contains("minimum"), "{e}");
    let e = rt.create_task(CreateTask::new("sized", json!({}))).await.unwrap_err();
    assert!(e.to_string().contains("/size: a required property, missing"), "{e}");
    assert!(store.list(ListQuery::default()).await.unwrap().is_empty());

    rt.create_task(CreateTask::new("sized", json!({"size": 2}))).await.unwrap();
    assert_eq!(store.list(ListQuery::default()).await.unwrap().len(), 1);
}

#[test]
fn an_invalid_declared_schema_is_a_build_error_naming_the_tool() {
    let clock = clock();
    let tool = FnTool::with_spec(spec(json!({"type": "integer-ish"})), |_ctx| async { Ok(json!({})) });
    let e = builder(memory(), &clock).tool(tool).build().unwrap_err();
    assert!(matches!(&e, RuntimeError::InvalidToolSchema { tool, .. } if tool == "sized"), "{e}");
    assert!(e.to_string().contains("\"sized\""), "{e}");
}
