//! How a followed call ended.

use mcp_tasks_core::TaskStatus;
use rmcp::model::{CallToolResult, ErrorData};
use serde_json::{Value, json};

/// The end of a tool call followed to its result.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome {
    /// The tool produced a result (which may carry `isError: true`).
    Completed {
        /// The task, or `None` when the server answered synchronously.
        task_id: Option<String>,
        /// The `CallToolResult`, as the server sent it.
        result: Value,
    },
    /// The task ended with a JSON-RPC error.
    Failed {
        /// The task.
        task_id: String,
        /// The error.
        error: ErrorData,
    },
    /// The task was cancelled.
    Cancelled {
        /// The task.
        task_id: String,
    },
}

impl TaskOutcome {
    /// The terminal status this outcome corresponds to.
    pub fn status(&self) -> TaskStatus {
        match self {
            TaskOutcome::Completed { .. } => TaskStatus::Completed,
            TaskOutcome::Failed { .. } => TaskStatus::Failed,
            TaskOutcome::Cancelled { .. } => TaskStatus::Cancelled,
        }
    }

    /// The task id, if the call became a task.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            TaskOutcome::Completed { task_id, .. } => task_id.as_deref(),
            TaskOutcome::Failed { task_id, .. } | TaskOutcome::Cancelled { task_id } => Some(task_id),
        }
    }

    /// The result parsed as a `CallToolResult`, for a completed call.
    pub fn call_tool_result(&self) -> Option<Result<CallToolResult, serde_json::Error>> {
        match self {
            TaskOutcome::Completed { result, .. } => Some(serde_json::from_value(result.clone())),
            _ => None,
        }
    }

    /// Whether the call completed with a tool result flagged `isError: true`.
    pub fn is_tool_error(&self) -> bool {
        matches!(self, TaskOutcome::Completed { result, .. } if result.get("isError") == Some(&Value::Bool(true)))
    }

    /// The text of a completed result: its text content blocks joined by
    /// newlines, other blocks as JSON; for failed/cancelled, `None`.
    pub fn text(&self) -> Option<String> {
        let TaskOutcome::Completed { result, .. } = self else { return None };
        let blocks = result.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut parts: Vec<String> = blocks
            .iter()
            .map(|b| match (b.get("type").and_then(Value::as_str), b.get("text").and_then(Value::as_str)) {
                (Some("text"), Some(text)) => text.to_owned(),
                _ => b.to_string(),
            })
            .collect();
        if parts.is_empty()
            && let Some(structured) = result.get("structuredContent")
        {
            parts.push(structured.to_string());
        }
        Some(parts.join("\n"))
    }

    /// A JSON summary: `{"status", "taskId", "result" | "error"}`.
    pub fn to_json(&self) -> Value {
        match self {
            TaskOutcome::Completed { task_id, result } => {
                json!({ "status": "completed", "taskId": task_id, "result": result })
            }
            TaskOutcome::Failed { task_id, error } => json!({ "status": "failed", "taskId": task_id, "error": error }),
            TaskOutcome::Cancelled { task_id } => json!({ "status": "cancelled", "taskId": task_id }),
        }
    }
}
