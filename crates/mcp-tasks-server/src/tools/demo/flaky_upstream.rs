//! `flaky_upstream`: calls an upstream that answers 503 the first `failures`
//! times, then succeeds. The runtime retries the transient failures with
//! backoff; past the attempt ceiling the task is poison and dead-lettered.

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{duration_arg, number_arg, stopped, text_result};

/// An upstream call that fails transiently, then succeeds.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlakyUpstream;

#[async_trait]
impl TaskTool for FlakyUpstream {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({
                "type": "object",
                "properties": {
                    "failures": {"type": "integer", "minimum": 0, "description": "How many attempts fail with 503 first (default 2)"},
                    "ms": {"type": "integer", "minimum": 0, "description": "Milliseconds each call takes (default 300)"}
                }
            }),
            expected_duration: Some(Duration::from_secs(2)),
            execution: Execution::TaskRequired,
            ..ToolSpec::new(
                "flaky_upstream",
                "Calls an upstream service that fails transiently (503) a few times before it answers.",
            )
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let args = ctx.arguments().clone();
        let failures = number_arg(&args, "failures").map_or(2, |n| n as u32);
        ctx.sleep(duration_arg(&args, Duration::from_millis(300))).await.map_err(stopped)?;
        if ctx.attempt() <= failures {
            // Left to the classifier: the 503 marks it transient.
            return Err(ToolFailure::new("upstream unavailable: 503 Service Unavailable").with_code(503));
        }
        Ok(text_result(format!("upstream answered on attempt {} of {}", ctx.attempt(), ctx.max_attempts())))
    }
}
