//! The study's one tool, `long_running_report`: a real [`TaskTool`] the
//! runtime registers. In E1 the runtime's executor runs it (a 0 s report
//! returns at once, a 60 s one is still running at the crash); in E4 the
//! executor never starts it, since that task must never finish. Its handler
//! waits through the context's cancellation-aware sleep.

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
