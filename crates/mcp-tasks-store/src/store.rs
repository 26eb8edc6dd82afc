//! The [`TaskStore`] trait.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};

use tokio::sync::broadcast;

use crate::error::StoreError;
use crate::events::StoreEvent;
use crate::leadership::{Leadership, SoleLeader};
use crate::params::*;
use crate::task_read::TaskRead;

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
    /// Creates a task, durably: status `working`, version 1, attempt 1,
    /// `updated_at = created_at`, `run_at = Some(new.run_at)`, fingerprint
    /// [`call_fingerprint`](mcp_tasks_core::call_fingerprint)`(tool, arguments)`.
    ///
    /// An idempotency key is unique per principal (the anonymous principal
    /// shares the slot of `""`) while its task row exists. With the key
    /// already bound to the same fingerprint, returns that task with
    /// `created: false`; bound to a different call, fails with
    /// [`StoreError::IdempotencyConflict`]. An id already in use fails with
    /// [`StoreError::DuplicateId`].
    async fn create(&self, new: NewTask) -> Result<Created, StoreError>;

    /// Reads one task.
    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError>;

    /// Reads one task only if `principal` owns it (`None` owns only
    /// anonymous tasks); another principal's task reads as missing.
    ///
    /// A backend should check the owner *before* decoding the row, so that
    /// another principal's task costs no more time than an unknown id (a
    /// timing difference would tell a caller that the id exists). The default
    /// reads the whole row first.
    async fn get_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.get(id).await?.filter(|r| r.principal.as_deref() == principal))
    }

    /// [`get_visible`](Self::get_visible) for an answer that writes the
    /// result out as it is: a backend holding results as JSON text may keep
    /// the result as that text ([`TaskRead::result_text`], checked to be
    /// JSON) instead of decoding it. The default decodes it.
    async fn get_visible_for_answer(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRead>, StoreError> {
        Ok(self.get_visible(id, principal).await?.map(TaskRead::decoded))
    }

    /// Whether the store can serve: `Ok` when it answers and can accept
    /// writes. Readiness probes call it; a backend that detects it can no
    /// longer write durably (its file was deleted, its database is gone)
    /// reports the cause here. The default is always ready.
    async fn health(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Records poll instants in one write: `last_polled_at = max(old, ts)`.
    /// Does not bump the version or touch `updated_at`. Unknown ids are
    /// ignored.
    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError>;

    /// Claims up to `limit` due tasks (`working`, no lease, not cancel-requested,
    /// `run_at <= now` (a `None` `run_at` is never due), of one of
    /// `params.tools` if given; oldest `run_at` first, then by id) and leases
    /// them to `owner`, bumping each version (`updated_at` is untouched: a
    /// claim changes nothing a client sees). Concurrent claimers never
    /// receive the same task.
    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError>;

    /// Applies guarded updates, each atomically and in order, in one commit.
    /// Returns one outcome per update.
    ///
    /// An update applies only if every set field of its [`Guard`] holds
    /// (`last_seen_at_or_before` is compared with
    /// [`TaskRecord::last_seen_at`]). A [`Change`] additionally needs a live
    /// row and a legal [`TaskStatus::check_transition`]; a terminal row is
    /// never changed. [`Update::Delete`] needs a terminal row and releases the
    /// idempotency key (dead letters stay). A guard that does not hold gives
    /// [`UpdateOutcome::Lost`] and changes nothing; a missing row,
    /// [`UpdateOutcome::NotFound`].
    ///
    /// An applied change bumps `version`, sets `updated_at = change.now` if
    /// it [is visible](crate::Change::is_visible), and
    /// in the same atomic step writes `change.dead_letter` (if any) as a
    /// [`DeadLetter`] built from the changed row (its tool, arguments,
    /// principal, and `attempts = attempt`), replacing an older letter of the
    /// same task. Returns the row after the change.
    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError>;

    /// [`apply`](TaskStore::apply) for a caller that does not read the rows
    /// after: the same guarded updates in one commit, but an applied change
    /// answers [`UpdateOutcome::Applied`]`(None)`, which spares a backend
    /// reading the row back and decoding it (the executor writing an
    /// attempt's outcome). The default calls `apply` and drops the rows.
    async fn apply_unread(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        let outcomes = self.apply(updates).await?;
        Ok(outcomes
            .into_iter()
            .map(|o| match o {
                UpdateOutcome::Applied(_) => UpdateOutcome::Applied(None),
                other => other,
            })
            .collect())
    }

    /// The attempt history of a task: one row per ended attempt, oldest
    /// first, each written by the guarded update that ended it (a change
    /// carrying [`Change::attempt_end`]), in the same atomic step — a lost
    /// race records nothing. Deleting the task (expiry) deletes its history;
    /// an unknown task has none. An attempt still running has no row yet.
    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError>;

    /// Candidate rows for a maintenance pass.
    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError>;

    /// Lists tasks for operators matching every set filter of `query`,
    /// newest `created_at` first (then by id, descending).
    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError>;

    /// How many tasks are in each status; every status is present (0 when
    /// none).
    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError>;

    /// How many tasks are in each (status, tool) pair that has any: one
    /// grouped count (SQLite reads counts its triggers keep; PostgreSQL
    /// counts its `(tool, status)` index, without reading a task row).
    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError>;

    /// Durations (`terminal_at − created_at`, ms) of the most recent `limit`
    /// completed tasks of `tool`, newest `terminal_at` first: the history a
    /// learned poll hint is drawn from. Rows without `terminal_at` are skipped.
    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError>;

    /// Dead letters matching every set filter of `query`, newest `dead_at`
    /// first (then most recently written).
    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError>;

    /// One dead letter.
    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError>;

    /// Creates `new` as a fresh task (a fresh attempt budget) from a dead
    /// letter and marks the letter requeued (`requeued_as`), atomically.
    /// Fails with [`StoreError::DeadLetterNotFound`] or
    /// [`StoreError::AlreadyRequeued`], or as [`create`](TaskStore::create)
    /// does; on failure nothing changes.
    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError>;

    /// Deletes dead letters matching every set filter of `query`
    /// (`dead_before` is exclusive); returns how many.
    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError>;

    /// Who runs maintenance (the reaper, lapsed-lease triage) when several
    /// processes share this store. By default this process alone
    /// ([`SoleLeader`]): right for a store no other process can use.
    fn leadership(&self) -> Arc<dyn Leadership> {
        Arc::new(SoleLeader)
    }

    /// Changes committed by any process sharing this store, announced as
    /// they commit (see [`StoreEvent`]); `None` (the default) when the
    /// backend announces nothing and other processes find changes on their
    /// timers. A receiver that falls behind gets `Lagged`: treat it as
    /// [`StoreEvent::Resync`].
    fn events(&self) -> Option<broadcast::Receiver<StoreEvent>> {
        None
    }
}
