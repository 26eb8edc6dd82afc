//! What callers hand the runtime ([`CreateTask`]) and what it hands back
//! ([`TaskView`]).

use mcp_tasks_core::TaskRecord;

/// A request to run a tool as a task.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTask {
    /// The tool to run.
    pub tool: String,
    /// Its arguments.
    pub arguments: serde_json::Value,
    /// The authenticated principal that will own the task, if any.
    pub principal: Option<String>,
    /// The creator's idempotency key, if it gave one.
    pub idempotency_key: Option<String>,
    /// The client's W3C `traceparent`, if it sent a valid one. The task
    /// stores the current span's trace context instead when one is exported
    /// (the creating request's span, itself the client's child), so this is
    /// what is kept when tracing is off.
    pub trace_parent: Option<String>,
}

impl CreateTask {
    /// A request for `tool` with `arguments`, no principal and no key.
    pub fn new(tool: impl Into<String>, arguments: serde_json::Value) -> Self {
        CreateTask { tool: tool.into(), arguments, principal: None, idempotency_key: None, trace_parent: None }
    }
}

/// A task as the server answers it on the wire: the record plus the numbers
/// it advertises.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskView {
    /// The stored task.
    pub record: TaskRecord,
    /// `ttlMs`: how long after `createdAt` the task is kept at least.
    pub ttl_ms: i64,
    /// `pollIntervalMs`: how often the client should poll.
    pub poll_interval_ms: u64,
    /// The orphan window: a live task unpolled this long is cancelled.
    pub orphan_window_ms: u64,
}
