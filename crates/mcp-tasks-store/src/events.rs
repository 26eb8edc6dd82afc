//! [`StoreEvent`]: changes a store announces to every process sharing it, so
//! work created, answered or cancelled through one instance wakes the
//! instance that has to act on it at once, not at its next timer.
//!
//! Events are hints, never the truth: a receiver always reads the store
//! before it acts, and every process still looks on its timers, so a lost
//! event delays work but never loses it.

use mcp_tasks_core::TaskId;

/// One announced change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreEvent {
    /// Work may be due: a task was created, or released to be claimed.
    WorkAvailable,
    /// A task's answers or cancel flag changed: a handler running it, or
    /// waiting for its input, should read it again.
    TaskChanged(TaskId),
    /// Events may have been missed (the source reconnected, or the receiver
    /// fell behind): look at everything once.
    Resync,
}
