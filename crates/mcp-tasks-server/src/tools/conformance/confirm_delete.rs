//! `confirm_delete {filename}`: asks for confirmation (one elicitation inside
//! the task), then "deletes" or keeps the file.

use std::collections::BTreeMap;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{accepted, elicit_form, from_runtime, string_arg, text_result};

/// Deletes a (pretend) file once the user confirms.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfirmDelete;

#[async_trait]
impl TaskTool for ConfirmDelete {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({
                "type": "object",
                "properties": {"filename": {"type": "string"}},
                "required": ["filename"]
            }),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("confirm_delete", "Asks the user to confirm, then deletes the named file.")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let filename = string_arg(ctx.arguments(), "filename").unwrap_or("the file").to_owned();
        let request = elicit_form(
            format!("Delete {filename}?"),
            json!({"confirm": {"type": "boolean", "title": "Delete it?"}}),
            &["confirm"],
        );
        let answers = ctx.request_input(BTreeMap::from([("confirm".to_owned(), request)])).await.map_err(from_runtime)?;
        let confirmed = answers
            .get("confirm")
            .and_then(accepted)
            .is_some_and(|c| c.get("confirm").and_then(Value::as_bool) == Some(true));
        Ok(text_result(if confirmed { format!("Deleted {filename}") } else { format!("Kept {filename}") }))
    }
}
