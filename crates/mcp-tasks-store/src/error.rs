//! What can go wrong inside a store, in words an operator can act on.

use mcp_tasks_core::TaskId;

use crate::params::QuotaResource;

/// A principal as a message names it.
fn who(principal: Option<&str>) -> String {
    match principal {
        Some(p) => format!("principal {p:?}"),
        None => "the anonymous principal (shared by every caller without credentials)".to_owned(),
    }
}

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
    /// The principal already holds as much as its [`Quota`](crate::Quota)
    /// allows; nothing was created.
    #[error(
        "{} has reached its limit of {limit} {}: it holds {used}. Stored tasks count until they \
         expire (the retention period after they finish); wait for some to expire, or ask the \
         operator to raise the limit",
        who(principal.as_deref()),
        match resource { QuotaResource::Tasks => "stored tasks", QuotaResource::ArgumentBytes => "bytes of stored tool arguments" }
    )]
    QuotaExceeded {
        /// The principal (`None`: the anonymous principal, one for all
        /// callers without one).
        principal: Option<String>,
        /// The limit that would have been passed.
        resource: QuotaResource,
        /// What the principal holds now.
        used: u64,
        /// The limit.
        limit: u64,
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
