//! The tool seam: what a tool declares ([`ToolSpec`]), what it runs
//! ([`TaskTool::run`]) and how an attempt can fail ([`ToolFailure`]).

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_core::TaskError;

use crate::context::TaskContext;

/// How a tool may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Execution {
    /// Only as a task: a client that cannot take a task gets an error.
    TaskRequired,
    /// As a task when the client can take one, else inline.
    TaskOptional,
}

/// What a tool declares about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's unique name.
    pub name: String,
    /// What it does, for the client's model.
    pub description: String,
    /// JSON Schema object of its arguments.
    pub input_schema: serde_json::Value,
    /// How long it usually takes; when `None` the runtime learns it from the
    /// store's history of completed tasks.
    pub expected_duration: Option<Duration>,
    /// Whether it is safe to run again from the start after a crash.
    pub rerunnable: bool,
    /// How it may run.
    pub execution: Execution,
}

impl ToolSpec {
    /// A task-required, re-runnable tool with an empty object schema and no
    /// declared duration; adjust fields as needed.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema: serde_json::json!({"type": "object"}),
            expected_duration: None,
            rerunnable: true,
            execution: Execution::TaskRequired,
        }
    }
}

/// A tool the runtime can run as a durable task.
#[async_trait]
pub trait TaskTool: Send + Sync + 'static {
    /// The tool's declaration (called once, at registration).
    fn spec(&self) -> ToolSpec;

    /// Runs one attempt. The result is the tool's result JSON (for MCP a
    /// serialised `CallToolResult`).
    async fn run(&self, ctx: TaskContext) -> Result<serde_json::Value, ToolFailure>;
}

/// How a failed attempt wants to be treated.
#[derive(Debug, Clone, PartialEq)]
pub enum FailureKind {
    /// Let the configured classifier decide (codes, markers, default class).
    Classify,
    /// The tool knows it may succeed if repeated.
    Transient,
    /// The tool knows it will fail the same way forever.
    Permanent,
    /// Run again after this long; does not consume an attempt.
    RetryAfter(Duration),
    /// End `failed` with exactly this JSON-RPC error, without retrying.
    Protocol(TaskError),
}

/// A failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    /// What went wrong.
    pub message: String,
    /// An HTTP-shaped status code, if the tool surfaced one.
    pub code: Option<u16>,
    /// How it wants to be treated.
    pub kind: FailureKind,
}

impl ToolFailure {
    /// A failure the classifier judges by its message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolFailure { message: message.into(), code: None, kind: FailureKind::Classify }
    }

    /// A failure the tool knows is transient.
    pub fn transient(message: impl Into<String>) -> Self {
        ToolFailure { kind: FailureKind::Transient, ..ToolFailure::new(message) }
    }

    /// A failure the tool knows is permanent.
    pub fn permanent(message: impl Into<String>) -> Self {
        ToolFailure { kind: FailureKind::Permanent, ..ToolFailure::new(message) }
    }

    /// Adds a status code for the classifier.
    pub fn with_code(mut self, code: u16) -> Self {
        self.code = Some(code);
        self
    }

    /// Asks to be run again after `delay` without consuming an attempt.
    pub fn retry_after(delay: Duration) -> Self {
        ToolFailure {
            message: format!("retry requested after {} ms", delay.as_millis()),
            code: None,
            kind: FailureKind::RetryAfter(delay),
        }
    }

    /// Ends the task `failed` with exactly `error`.
    pub fn protocol(error: TaskError) -> Self {
        ToolFailure { message: error.message.clone(), code: None, kind: FailureKind::Protocol(error) }
    }
}

impl std::fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(code) = self.code {
            write!(f, " (code {code})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ToolFailure {}
