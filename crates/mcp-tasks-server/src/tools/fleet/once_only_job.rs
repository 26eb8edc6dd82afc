//! `once_only_job {ms}`: like `counted_job`, but declared unsafe to re-run
//! (think of a payment): after a crash it is failed, never started again.

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use super::counted_job::journalled_work;

/// A job that must never start twice; every start is journalled.
#[derive(Debug, Clone, Copy, Default)]
pub struct OnceOnlyJob;

#[async_trait]
impl TaskTool for OnceOnlyJob {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "description": "How long it works (default 1000)"}}
            }),
            expected_duration: Some(Duration::from_secs(1)),
            rerunnable: false,
            execution: Execution::TaskRequired,
            ..ToolSpec::new(
                "once_only_job",
                "Works for `ms` milliseconds; unsafe to re-run; journals its start (fleet test fixture).",
            )
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        journalled_work(&ctx).await
    }
}
