//! From the runtime's [`TaskView`] to the tasks extension's wire shapes
//! (`CreateTaskResult`, `DetailedTask`). The vendor `_meta` key that carries
//! the server's orphan window and the status mapping are the ones the client
//! reads with, from `mcp-tasks-wire`.

use mcp_tasks_core::TaskStatus as CoreStatus;
use mcp_tasks_runtime::TaskView;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, GetTaskResult, InputRequest, InputRequests, JsonObject, MetaObject,
    Task, TaskPayload, TaskStatus,
};
use serde_json::Value;

pub use mcp_tasks_wire::{IDEMPOTENCY_KEY_META_KEY, ORPHAN_WINDOW_META_KEY};

/// The wire status for a stored status (the mapping the client reads back with).
pub fn status(s: CoreStatus) -> TaskStatus {
    mcp_tasks_wire::wire_status(s)
}

/// The base `Task` fields: id, status, message, timestamps, `ttlMs`, `pollIntervalMs`.
pub fn task(view: &TaskView) -> Task {
    let r = &view.record;
    let mut t = Task::new(r.id.as_str(), status(r.status), r.created_at.to_rfc3339(), r.updated_at.to_rfc3339())
        .with_ttl_ms(u64::try_from(view.ttl_ms.max(1)).unwrap_or(1))
        .with_poll_interval_ms(view.poll_interval_ms.max(1));
    if let Some(msg) = &r.status_message {
        t = t.with_status_message(msg.clone());
    }
    t
}

/// `_meta` for a task result: the orphan window under [`ORPHAN_WINDOW_META_KEY`].
pub fn task_meta(view: &TaskView) -> MetaObject {
    mcp_tasks_wire::orphan_window_meta(view.orphan_window_ms)
}

/// The answer to a `tools/call` that created (or found, by idempotency key) a task.
pub fn create_result(view: &TaskView) -> CreateTaskResult {
    CreateTaskResult::new(task(view)).with_meta(task_meta(view))
}

/// The answer to `tasks/get`: the task with its status-specific payload.
pub fn get_result(view: &TaskView) -> Result<GetTaskResult, McpError> {
    let mut result = GetTaskResult::new(detailed(view)?);
    result.meta = Some(task_meta(view));
    Ok(result)
}

/// [`get_result`] of a view the caller gives up: a completed task's result
/// moves into the answer instead of being copied.
pub fn into_get_result(mut view: TaskView) -> Result<GetTaskResult, McpError> {
    let stored_result = view.record.result.take();
    let mut result = GetTaskResult::new(detailed_with(&view, stored_result)?);
    result.meta = Some(task_meta(&view));
    Ok(result)
}

/// The task with the payload its status calls for.
pub fn detailed(view: &TaskView) -> Result<DetailedTask, McpError> {
    detailed_with(view, view.record.result.clone())
}

/// [`detailed`], with the stored result given apart from the view's record
/// (whose own `result` is not read).
fn detailed_with(view: &TaskView, stored_result: Option<Value>) -> Result<DetailedTask, McpError> {
    let r = &view.record;
    let mut base = task(view);
    let payload = match r.status {
        CoreStatus::Working => TaskPayload::Working,
        CoreStatus::Cancelled => TaskPayload::Cancelled,
        CoreStatus::InputRequired => {
            let pending = pending_requests(view)?;
            if pending.is_empty() {
                // Every request is answered; the handler is about to resume.
                base.status = TaskStatus::Working;
                TaskPayload::Working
            } else {
                TaskPayload::InputRequired { input_requests: pending }
            }
        }
        CoreStatus::Completed => TaskPayload::Completed { result: result_object(stored_result) },
        CoreStatus::Failed => {
            let error = match &r.error {
                Some(e) => serde_json::to_value(e).unwrap_or_default(),
                None => serde_json::json!({"code": -32603, "message": "task failed without a recorded error"}),
            };
            TaskPayload::Failed { error: into_object(error) }
        }
    };
    Ok(DetailedTask::new(base, payload))
}

/// Outstanding input requests (those without an answer), as wire requests.
fn pending_requests(view: &TaskView) -> Result<InputRequests, McpError> {
    view.record
        .pending_input()
        .map(|(key, request)| {
            serde_json::from_value::<InputRequest>(request.clone()).map(|req| (key.clone(), req)).map_err(|e| {
                McpError::internal_error(
                    format!(
                        "task {} holds input request {key:?} that is not an elicitation, sampling or roots request: {e}",
                        view.record.id
                    ),
                    None,
                )
            })
        })
        .collect()
}

/// A stored tool result as a JSON object (a `CallToolResult`).
fn result_object(result: Option<Value>) -> JsonObject {
    match result {
        Some(Value::Object(map)) => map,
        Some(other) => into_object(serde_json::json!({
            "content": [{"type": "text", "text": other.to_string()}],
        })),
        None => into_object(serde_json::json!({"content": []})),
    }
}

fn into_object(v: Value) -> JsonObject {
    match v {
        Value::Object(map) => map,
        other => {
            let mut map = JsonObject::new();
            map.insert("value".to_owned(), other);
            map
        }
    }
}

/// A stored tool result, read back as a `CallToolResult` for an inline answer.
pub fn call_tool_result(result: Option<&Value>) -> Result<CallToolResult, McpError> {
    serde_json::from_value(Value::Object(result_object(result.cloned())))
        .map_err(|e| McpError::internal_error(format!("tool produced a result that is not a CallToolResult: {e}"), None))
}
