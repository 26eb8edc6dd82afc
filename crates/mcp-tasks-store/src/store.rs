//! The [`TaskStore`] trait.

use std::collections::BTreeMap;

use async_trait::async_trait;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};

use crate::error::StoreError;
use crate::params::*;

/// A durable home for tasks. Every backend (in-memory, SQLite, PostgreSQL)
/// implements this and passes the shared conformance suite.
///
/// Contract, for every implementation:
/// - `create` returns only after the row is durable (for durable stores), and
///   concurrent creations may share one commit.
/// - Every status change goes through [`apply`](TaskStore::apply), a
///   compare-and-set on the [`Guard`]: a lost race changes nothing.
/// - A terminal task is never changed, only deleted by an expiry update.
/// - Poll timestamps ([`record_polls`](TaskStore::record_polls)) do not bump
///   the version and may be written lazily by callers in batches.
#[async_trait]
pub trait TaskStore: Send + Sync + std::fmt::Debug {
    /// Creates a task, durably. With an idempotency key already bound (for
    /// the same principal) to the same tool and arguments, returns that task
    /// with `created: false`; bound to a different call, fails with
    /// [`StoreError::IdempotencyConflict`].
    async fn create(&self, new: NewTask) -> Result<Created, StoreError>;

    /// Reads one task.
    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError>;

    /// Records poll instants in one write; a timestamp never moves backwards.
    /// Unknown ids are ignored.
    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError>;

    /// Claims up to `limit` due tasks (`working`, no lease, not cancel-requested,
    /// `run_at <= now`, oldest `run_at` first) and leases them to `owner`.
    /// Concurrent claimers never receive the same task.
    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError>;

    /// Applies guarded updates, each atomically and in order, in one commit.
    /// Returns one outcome per update.
    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError>;

    /// Candidate rows for a maintenance pass.
    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError>;

    /// Lists tasks for operators, newest first.
    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError>;

    /// How many tasks are in each status.
    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError>;

    /// Durations (`terminal_at − created_at`, ms) of the most recent `limit`
    /// completed tasks of `tool`, newest first: the history a learned poll
    /// hint is drawn from.
    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError>;

    /// Dead letters, newest first.
    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError>;

    /// One dead letter.
    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError>;

    /// Creates `new` as a fresh task (a fresh attempt budget) from a dead
    /// letter and marks the letter requeued, atomically.
    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError>;

    /// Deletes matching dead letters; returns how many.
    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError>;
}
