//! `test_tool_with_task`: an MRTR round first (asks for `user_name` in the
//! request, `InputRequiredResult`), then a durable task whose result names
//! the user. The inline front and the task tool share the name.

use std::collections::BTreeMap;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, InputRequest, InputRequiredResult, Tool};
use serde_json::{Value, json};

use super::schema;
use crate::errors::tasks_required;
use crate::inline::{InlineCall, InlineTool};
use crate::tools::support::{accepted, elicit_form, string_arg, text_result};

const NAME: &str = "test_tool_with_task";
const KEY: &str = "user_name";

/// The front: gathers `user_name`, then starts the task.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestToolWithTaskFront;

#[async_trait]
impl InlineTool for TestToolWithTaskFront {
    fn definition(&self) -> Tool {
        Tool::new(
            NAME,
            "Asks for your name (in the request), then greets you from a task.",
            schema(json!({"type": "object"})),
        )
    }

    async fn call(&self, call: InlineCall) -> Result<CallToolResponse, McpError> {
        if !call.declares_tasks() {
            return Err(tasks_required());
        }
        let answer = call.input_responses.as_ref().and_then(|r| r.get(KEY));
        let name = answer.and_then(accepted).and_then(|content| {
            content.get("name").or_else(|| content.get(KEY)).or_else(|| content.values().next()).and_then(Value::as_str)
        });
        match name {
            Some(name) => call.start_task(NAME, json!({KEY: name})).await,
            None => {
                let request = elicit_form("What is your name?", json!({"name": {"type": "string"}}), &["name"]);
                let request: InputRequest = serde_json::from_value(request)
                    .map_err(|e| McpError::internal_error(format!("bad elicitation request: {e}"), None))?;
                let requests = BTreeMap::from([(KEY.to_owned(), request)]);
                Ok(CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), None)))
            }
        }
    }
}

/// The task: greets the user the front asked about.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestToolWithTask;

#[async_trait]
impl TaskTool for TestToolWithTask {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({"type": "object", "properties": {KEY: {"type": "string"}}, "required": [KEY]}),
            execution: Execution::TaskRequired,
            ..ToolSpec::new(NAME, "Greets the user named in the arguments.")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let name = string_arg(ctx.arguments(), KEY).unwrap_or("stranger");
        Ok(text_result(format!("Hello, {name}! Your task is done.")))
    }
}
