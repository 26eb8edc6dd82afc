//! `counted_job {ms}`: journals its start, works for `ms` milliseconds,
//! journals its finish. Safe to re-run, so a crash resumes it.

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use super::journal::record;
use crate::tools::support::{duration_arg, stopped, text_result};

/// A re-runnable job whose every start is journalled.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountedJob;

#[async_trait]
impl TaskTool for CountedJob {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "description": "How long it works (default 1000)"}}
            }),
            expected_duration: Some(Duration::from_secs(1)),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("counted_job", "Works for `ms` milliseconds; journals each start (fleet test fixture).")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        journalled_work(&ctx).await
    }
}

/// The body both journalled jobs share: start, work, finish (or stopped).
pub(super) async fn journalled_work(ctx: &TaskContext) -> Result<Value, ToolFailure> {
    record(ctx, "start");
    if let Err(cancelled) = ctx.sleep(duration_arg(ctx.arguments(), Duration::from_secs(1))).await {
        record(ctx, "stopped");
        return Err(stopped(cancelled));
    }
    record(ctx, "finish");
    Ok(text_result(format!("attempt {} on pid {}", ctx.attempt(), std::process::id())))
}
