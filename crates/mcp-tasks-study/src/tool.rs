//! The study's one tool, `long_running_report`: a real [`TaskTool`] the
//! runtime registers. E1 and E4 need its declaration and the runtime's
//! handling of its tasks, not its handler: the study never lets the executor
//! start it (E1 plays the executor's claim and completion writes itself, E4's
//! task must never finish). Its handler waits through the context's
//! cancellation-aware sleep.

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_runtime::{TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

/// The tool's name, as the paper's study names it.
pub const TOOL_NAME: &str = "long_running_report";

/// Builds a report after `seconds` (argument, default 60) of work.
#[derive(Debug, Clone, Default)]
pub struct LongRunningReport {
    expected: Option<Duration>,
}

impl LongRunningReport {
    /// The tool, declaring `expected` as its usual duration (or none, so the
    /// runtime learns it from history).
    pub fn new(expected: Option<Duration>) -> Self {
        LongRunningReport { expected }
    }
}

/// The result a finished report returns (a `CallToolResult`).
pub fn report_result(seconds: u64) -> Value {
    json!({"content": [{"type": "text", "text": format!("report over {seconds} s of data is ready")}], "isError": false})
}

#[async_trait]
impl TaskTool for LongRunningReport {
    fn spec(&self) -> ToolSpec {
        let mut spec = ToolSpec::new(TOOL_NAME, "Builds a long-running report; safe to re-run from the start.");
        spec.input_schema = json!({
            "type": "object",
            "properties": {"seconds": {"type": "integer", "minimum": 0}},
        });
        spec.expected_duration = self.expected;
        spec.rerunnable = true;
        spec
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let seconds = ctx.arguments().get("seconds").and_then(Value::as_u64).unwrap_or(60);
        ctx.sleep(Duration::from_secs(seconds))
            .await
            .map_err(|_| ToolFailure::permanent("report cancelled before it was ready"))?;
        Ok(report_result(seconds))
    }
}
