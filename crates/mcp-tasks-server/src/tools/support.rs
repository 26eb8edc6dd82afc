//! Small helpers tool authors share: results, elicitation requests, answers
//! and arguments.

use std::time::Duration;

use mcp_tasks_runtime::{Cancelled, RuntimeError, ToolFailure};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

/// A successful tool result with one text block, as JSON.
pub fn text_result(text: impl Into<String>) -> Value {
    serde_json::to_value(CallToolResult::success(vec![ContentBlock::text(text.into())])).unwrap_or_default()
}

/// A tool result that reports an error (`isError: true`: the task still
/// ends `completed`), as JSON.
pub fn error_result(text: impl Into<String>) -> Value {
    serde_json::to_value(CallToolResult::error(vec![ContentBlock::text(text.into())])).unwrap_or_default()
}

/// An `elicitation/create` request for a form with the given JSON Schema
/// `properties` and `required` names.
pub fn elicit_form(message: impl Into<String>, properties: Value, required: &[&str]) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message.into(),
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        }
    })
}

/// The content of an accepted elicitation answer, `None` when declined or cancelled.
pub fn accepted(answer: &Value) -> Option<&Map<String, Value>> {
    (answer.get("action").and_then(Value::as_str) == Some("accept"))
        .then(|| answer.get("content").and_then(Value::as_object))
        .flatten()
}

/// A non-negative number argument.
pub fn number_arg(arguments: &Value, name: &str) -> Option<f64> {
    arguments.get(name).and_then(Value::as_f64).filter(|v| v.is_finite() && *v >= 0.0)
}

/// A string argument.
pub fn string_arg<'a>(arguments: &'a Value, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}

/// How long a tool should take: `ms` (milliseconds, for fast tests) wins over
/// `seconds`; else `default`.
pub fn duration_arg(arguments: &Value, default: Duration) -> Duration {
    if let Some(ms) = number_arg(arguments, "ms") {
        Duration::from_millis(ms as u64)
    } else if let Some(s) = number_arg(arguments, "seconds") {
        Duration::from_secs_f64(s.min(86_400.0))
    } else {
        default
    }
}

/// The failure a handler returns when it was told to stop (cancelled, shut
/// down, taken over): the runtime has already decided the task's fate.
pub fn stopped(_: Cancelled) -> ToolFailure {
    ToolFailure::permanent("stopped: the task was cancelled or handed over")
}

/// A runtime error inside a handler: stop when told to, else retry (store trouble is transient).
pub fn from_runtime(e: RuntimeError) -> ToolFailure {
    match e {
        RuntimeError::Cancelled(_) | RuntimeError::LeaseLost(_) | RuntimeError::ShuttingDown => {
            ToolFailure::permanent(format!("stopped: {e}"))
        }
        other => ToolFailure::transient(format!("task store unavailable: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicitation_requests_are_wire_input_requests() {
        let req = elicit_form("Sure?", json!({"confirm": {"type": "boolean"}}), &["confirm"]);
        serde_json::from_value::<rmcp::model::InputRequest>(req).unwrap();
    }

    #[test]
    fn results_are_call_tool_results() {
        let ok: CallToolResult = serde_json::from_value(text_result("hi")).unwrap();
        assert_ne!(ok.is_error, Some(true));
        let bad: CallToolResult = serde_json::from_value(error_result("no")).unwrap();
        assert_eq!(bad.is_error, Some(true));
    }

    #[test]
    fn answers_and_arguments() {
        assert!(accepted(&json!({"action": "accept", "content": {"a": 1}})).is_some());
        assert!(accepted(&json!({"action": "decline"})).is_none());
        let args = json!({"seconds": 2, "ms": 5});
        assert_eq!(duration_arg(&args, Duration::ZERO), Duration::from_millis(5));
        assert_eq!(duration_arg(&json!({"seconds": 0.5}), Duration::ZERO), Duration::from_millis(500));
        assert_eq!(duration_arg(&json!({"seconds": -1}), Duration::from_secs(3)), Duration::from_secs(3));
    }
}
