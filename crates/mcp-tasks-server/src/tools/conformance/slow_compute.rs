//! `slow_compute {seconds, label}`: sleeps, then answers. A task for a client
//! that can take one, inline otherwise; settles `cancelled` when cancelled.

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{duration_arg, stopped, string_arg, text_result};

/// A computation that takes `seconds` (or `ms`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SlowCompute;

#[async_trait]
impl TaskTool for SlowCompute {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({
                "type": "object",
                "properties": {
                    "seconds": {"type": "number", "minimum": 0},
                    "ms": {"type": "integer", "minimum": 0, "description": "Overrides seconds"},
                    "label": {"type": "string"}
                }
            }),
            execution: Execution::TaskOptional,
            ..ToolSpec::new("slow_compute", "Sleeps for `seconds`, then returns a result labelled `label`.")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let took = duration_arg(ctx.arguments(), Duration::from_secs(1));
        let label = string_arg(ctx.arguments(), "label").unwrap_or("computation").to_owned();
        ctx.sleep(took).await.map_err(stopped)?;
        Ok(text_result(format!("{label}: computed in {} ms", took.as_millis())))
    }
}
