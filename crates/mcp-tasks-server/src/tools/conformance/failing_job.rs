//! `failing_job`: a task-only tool that runs and reports a tool error
//! (`isError: true`), so its task ends `completed`, not `failed`.

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{duration_arg, error_result, stopped};

/// Always reports a tool execution error after a short while.
#[derive(Debug, Clone, Copy, Default)]
pub struct FailingJob;

#[async_trait]
impl TaskTool for FailingJob {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}}),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("failing_job", "Runs, then reports a tool execution error (isError: true).")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        ctx.sleep(duration_arg(ctx.arguments(), Duration::from_millis(300))).await.map_err(stopped)?;
        Ok(error_result("failing_job: the job ran and reported an error, as designed"))
    }
}
