//! `multi_input`: asks two questions at once (two parallel elicitations), so
//! a client may answer them one at a time.

use std::collections::BTreeMap;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{accepted, elicit_form, from_runtime, text_result};

/// Two simultaneous questions.
#[derive(Debug, Clone, Copy, Default)]
pub struct MultiInput;

#[async_trait]
impl TaskTool for MultiInput {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({"type": "object", "properties": {}}),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("multi_input", "Asks for a name and a confirmation at the same time.")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let requests = BTreeMap::from([
            ("name".to_owned(), elicit_form("Your name?", json!({"name": {"type": "string"}}), &["name"])),
            ("confirm".to_owned(), elicit_form("Proceed?", json!({"confirm": {"type": "boolean"}}), &["confirm"])),
        ]);
        let answers = ctx.request_input(requests).await.map_err(from_runtime)?;
        let name = answers.get("name").and_then(accepted).and_then(|c| c.get("name")).and_then(Value::as_str);
        let proceed = answers.get("confirm").and_then(accepted).and_then(|c| c.get("confirm")).and_then(Value::as_bool);
        Ok(text_result(format!("name: {}, proceed: {}", name.unwrap_or("(none)"), proceed.unwrap_or(false))))
    }
}
