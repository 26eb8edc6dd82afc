//! `long_running_report`: writes a report section by section, saying which
//! section it is on in the task's status message.

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{duration_arg, from_runtime, number_arg, stopped, string_arg, text_result};

/// A report that takes a while (default 5 sections of 2 s).
#[derive(Debug, Clone, Copy, Default)]
pub struct LongRunningReport;

const DEFAULT_SECTIONS: u64 = 5;
const DEFAULT_SECTION_TIME: Duration = Duration::from_secs(2);

#[async_trait]
impl TaskTool for LongRunningReport {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({
                "type": "object",
                "properties": {
                    "topic": {"type": "string", "description": "What the report is about"},
                    "sections": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many sections (default 5)"},
                    "ms": {"type": "integer", "minimum": 0, "description": "Milliseconds per section (default 2000)"}
                }
            }),
            expected_duration: Some(DEFAULT_SECTION_TIME * DEFAULT_SECTIONS as u32),
            execution: Execution::TaskRequired,
            ..ToolSpec::new(
                "long_running_report",
                "Writes a report section by section; reports progress in the task's status message.",
            )
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let args = ctx.arguments().clone();
        let topic = string_arg(&args, "topic").unwrap_or("the quarter").to_owned();
        let sections = number_arg(&args, "sections").map_or(DEFAULT_SECTIONS, |n| (n as u64).clamp(1, 100));
        let per_section = duration_arg(&args, DEFAULT_SECTION_TIME);
        let mut report = format!("Report on {topic}\n");
        for i in 1..=sections {
            ctx.set_status_message(format!("writing section {i} of {sections}")).await.map_err(from_runtime)?;
            ctx.sleep(per_section).await.map_err(stopped)?;
            report.push_str(&format!("\n{i}. Findings for part {i} of {topic}."));
        }
        Ok(text_result(report))
    }
}
