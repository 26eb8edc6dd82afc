//! `test_tool_with_task`, the durable half: [`ConformanceServer`](super::ConformanceServer)'s
//! tool of the same name asks for `user_name` in the request
//! (`InputRequiredResult`), then starts this task, whose result names the user.

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{string_arg, text_result};

const NAME: &str = "test_tool_with_task";
const KEY: &str = "user_name";

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
