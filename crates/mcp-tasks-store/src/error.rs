//! What can go wrong inside a store, in words an operator can act on.

use mcp_tasks_core::TaskId;

/// A store operation that could not be carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The idempotency key is already bound to a different tool call.
    #[error(
        "idempotency key {key:?} is already bound to task {existing} with a different tool or arguments; \
         reuse a key only for the identical call"
    )]
    IdempotencyConflict {
        /// The reused key.
        key: String,
        /// The task the key belongs to.
        existing: TaskId,
    },
    /// A task with this id already exists.
    #[error("task {0} already exists")]
    DuplicateId(TaskId),
    /// The database could not be opened or created.
    #[error("cannot open task database {path}: {reason}")]
    Open {
        /// Where we looked.
        path: String,
        /// Why it failed.
        reason: String,
    },
    /// The file is a database, but not one of ours (or of a newer version).
    #[error("{path} is not an mcp-tasks database: {reason}")]
    NotOurs {
        /// The file.
        path: String,
        /// What gave it away.
        reason: String,
    },
    /// Another server is serving this database, and a store can have only
    /// one: its start-up triage would take over the other's running tasks.
    #[error(
        "{path} is already being served by another mcp-tasks server{}: an SQLite task database \
         can have only one server (that server holds the lock on {lock}). Stop that server first, \
         or serve another database file; `mcp-tasks tasks` and `mcp-tasks dlq` work beside a running server",
        holder.map(|pid| format!(" (pid {pid})")).unwrap_or_default()
    )]
    InUse {
        /// The database.
        path: String,
        /// The lock file the other server holds.
        lock: String,
        /// That server's process id, when it could be read.
        holder: Option<u32>,
    },
    /// No dead letter for this task.
    #[error("no dead letter for task {0}")]
    DeadLetterNotFound(TaskId),
    /// The dead letter was requeued before.
    #[error("dead letter for task {task} was already requeued as task {requeued_as}")]
    AlreadyRequeued {
        /// The dead-lettered task.
        task: TaskId,
        /// The task it was requeued as.
        requeued_as: TaskId,
    },
    /// A stored row could not be decoded.
    #[error("stored task {id} is unreadable: {reason}")]
    Corrupt {
        /// The row's task id.
        id: String,
        /// What was wrong with it.
        reason: String,
    },
    /// The database failed or is unreachable.
    #[error("task store unavailable: {0}")]
    Unavailable(String),
    /// The store was closed.
    #[error("task store is closed")]
    Closed,
}
