//! `protocol_error_job`: a task that ends `failed` with a JSON-RPC error.

use async_trait::async_trait;
use mcp_tasks_core::TaskError;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

/// Always fails at the protocol level (-32603), without retrying.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProtocolErrorJob;

#[async_trait]
impl TaskTool for ProtocolErrorJob {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({"type": "object", "properties": {}}),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("protocol_error_job", "Fails with a JSON-RPC internal error; its task ends failed.")
        }
    }

    async fn run(&self, _ctx: TaskContext) -> Result<Value, ToolFailure> {
        Err(ToolFailure::protocol(
            TaskError::internal("protocol_error_job: internal failure, as designed")
                .with_data(json!({"tool": "protocol_error_job"})),
        ))
    }
}
