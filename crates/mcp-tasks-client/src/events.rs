//! What a following client reports while it waits, so a UI can show it.

use std::time::Duration;

use mcp_tasks_core::TaskStatus;

/// Something that happened while following a task.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskEvent {
    /// The server turned the call into a task (the handle is in the book).
    Created {
        /// The task.
        task_id: String,
        /// Its first status.
        status: TaskStatus,
        /// Its first status message.
        status_message: Option<String>,
    },
    /// The status or the status message changed.
    Status {
        /// The task.
        task_id: String,
        /// The new status.
        status: TaskStatus,
        /// The new status message.
        status_message: Option<String>,
    },
    /// Answers to these input keys were delivered.
    InputAnswered {
        /// The task, or `None` for a `tools/call` input round.
        task_id: Option<String>,
        /// The keys answered.
        keys: Vec<String>,
    },
    /// The client will poll again after `delay`.
    Waiting {
        /// The task.
        task_id: String,
        /// The delay.
        delay: Duration,
    },
    /// A poll did not reach the server; the client keeps trying.
    Unreachable {
        /// The task.
        task_id: String,
        /// Why.
        error: String,
    },
}

/// Receives [`TaskEvent`]s. Closures `Fn(&TaskEvent)` are observers.
pub trait TaskObserver: Send + Sync {
    /// Called for each event, in order.
    fn on_event(&self, event: &TaskEvent);
}

impl<F: Fn(&TaskEvent) + Send + Sync> TaskObserver for F {
    fn on_event(&self, event: &TaskEvent) {
        self(event)
    }
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl TaskObserver for Silent {
    fn on_event(&self, _event: &TaskEvent) {}
}
