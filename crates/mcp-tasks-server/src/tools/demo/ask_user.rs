//! `ask_user`: asks the user a question through a durable input request
//! (`inputRequests` on `tasks/get`, answered with `tasks/update`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

use crate::tools::support::{accepted, elicit_form, from_runtime, string_arg, text_result};

/// Asks one question and reports the answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskUser;

#[async_trait]
impl TaskTool for AskUser {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({
                "type": "object",
                "properties": {"question": {"type": "string", "description": "What to ask (default: your name)"}}
            }),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("ask_user", "Asks the user a question and reports the answer.")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let question = string_arg(ctx.arguments(), "question").unwrap_or("What is your name?").to_owned();
        let request = elicit_form(question.clone(), json!({"answer": {"type": "string", "title": "Answer"}}), &["answer"]);
        let answers = ctx.request_input(BTreeMap::from([("answer".to_owned(), request)])).await.map_err(from_runtime)?;
        let reply = answers.get("answer").and_then(accepted).and_then(|c| c.get("answer")).and_then(Value::as_str);
        Ok(text_result(match reply {
            Some(text) => format!("{question} You answered: {text}"),
            None => format!("{question} You did not answer."),
        }))
    }
}
