//! What can go wrong in the runtime, in words a caller can act on.

use mcp_tasks_core::TaskId;
use mcp_tasks_store::StoreError;

use crate::schema::{SchemaViolation, violation_list};

/// A runtime operation that could not be carried out.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuntimeError {
    /// No such task — also what a principal gets for another principal's
    /// task, with the same words, so ids cannot be probed.
    #[error("task {0} not found (unknown, expired, or not yours)")]
    TaskNotFound(TaskId),
    /// The tool is not registered with this runtime.
    #[error("unknown tool {tool:?}; this server's tools are: {}", known_list(.known))]
    UnknownTool {
        /// The name asked for.
        tool: String,
        /// The tools that do exist, sorted.
        known: Vec<String>,
    },
    /// The arguments do not match the tool's declared input schema; nothing
    /// was queued.
    #[error("invalid arguments for tool \"{tool}\": {}", violation_list(.violations))]
    InvalidArguments {
        /// The tool called.
        tool: String,
        /// Where the arguments are wrong and what was expected (at least one).
        violations: Vec<SchemaViolation>,
    },
    /// An answer does not match what its input request asked for; nothing
    /// was stored and the question stays open.
    #[error("invalid answer to input request \"{key}\": {}", violation_list(.violations))]
    InvalidAnswer {
        /// The input request's key.
        key: String,
        /// Where the answer is wrong and what was expected (at least one).
        violations: Vec<SchemaViolation>,
    },
    /// A tool declares an input schema that is not a valid JSON Schema.
    #[error("tool \"{tool}\" declares an input schema that is not a valid JSON Schema: {reason}")]
    InvalidToolSchema {
        /// The tool.
        tool: String,
        /// Why the schema does not compile.
        reason: String,
    },
    /// The idempotency key is bound to a different tool call.
    #[error(
        "idempotency key {key:?} is already bound to a different tool call (other tool or arguments); \
         reuse a key only for the identical call"
    )]
    IdempotencyConflict {
        /// The reused key.
        key: String,
    },
    /// The policy or runtime configuration does not hold together.
    #[error("invalid policy: {0}")]
    InvalidPolicy(String),
    /// Two tools were registered under one name.
    #[error("tool {0:?} is registered twice; tool names must be unique")]
    DuplicateTool(String),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
    /// The runtime is shutting down and takes no new work.
    #[error("the task runtime is shutting down and takes no new work")]
    ShuttingDown,
    /// The task was cancelled while a handler waited on it.
    #[error("task {0} was cancelled")]
    Cancelled(TaskId),
    /// This executor no longer holds the task's lease: another executor, the
    /// reaper or triage has taken it over, so this handler must stop.
    #[error("task {0} is no longer leased to this executor (it was taken over, timed out or finished)")]
    LeaseLost(TaskId),
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() { "(none)".to_owned() } else { known.join(", ") }
}

impl From<StoreError> for RuntimeError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::IdempotencyConflict { key, .. } => RuntimeError::IdempotencyConflict { key },
            other => RuntimeError::Store(other),
        }
    }
}

/// A wait that ended because the task was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tool_names_it_and_lists_known_ones() {
        let e = RuntimeError::UnknownTool { tool: "nope".into(), known: vec!["a".into(), "b".into()] };
        let text = e.to_string();
        assert!(text.contains("\"nope\"") && text.contains("a, b"), "{text}");
    }

    #[test]
    fn store_conflicts_become_idempotency_conflicts() {
        let e: RuntimeError = StoreError::IdempotencyConflict { key: "k".into(), existing: TaskId::from("t") }.into();
        assert_eq!(e, RuntimeError::IdempotencyConflict { key: "k".into() });
        assert!(e.to_string().contains("idempotency key \"k\""));
    }
}
