//! `await_answer`: asks one question, journals the moment the answer reaches
//! the handler, and returns that moment (`receivedAtMs`, wall-clock) and the
//! process it ran in, so a test can time an answer sent through another
//! instance.

use std::collections::BTreeMap;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::journal::{record, wall_ms};
use crate::tools::support::{elicit_form, from_runtime};

/// Waits for one answer and reports when it arrived.
#[derive(Debug, Clone, Copy, Default)]
pub struct AwaitAnswer;

#[async_trait]
impl TaskTool for AwaitAnswer {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({"type": "object"}),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("await_answer", "Asks one question and reports when the answer arrived (fleet test fixture).")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        record(&ctx, "start");
        let request = elicit_form("Go on?", json!({"go": {"type": "boolean"}}), &["go"]);
        let asked = ctx.request_input(BTreeMap::from([("go".to_owned(), request)])).await;
        let received_at_ms = wall_ms();
        if let Err(e) = asked {
            record(&ctx, "stopped");
            return Err(from_runtime(e));
        }
        record(&ctx, "answered");
        let structured = json!({"receivedAtMs": received_at_ms, "pid": std::process::id(), "attempt": ctx.attempt()});
        let mut result = CallToolResult::success(vec![ContentBlock::text(structured.to_string())]);
        result.structured_content = Some(structured);
        Ok(serde_json::to_value(result).unwrap_or_default())
    }
}
