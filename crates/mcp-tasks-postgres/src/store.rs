//! [`PostgresStore`]: the [`TaskStore`] on a PostgreSQL schema.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Pool};
use mcp_tasks_core::{Clock, TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::{
    AttemptRecord, ClaimParams, Created, DeadLetter, DeadLetterQuery, GuardedUpdate, Leadership, ListQuery, NewTask,
    PurgeQuery, StoreError, StoreEvent, SweepQuery, TaskStore, UpdateOutcome,
};
use tokio::sync::broadcast;

use crate::apply::UpdateJob;
use crate::clock::DatabaseClock;
use crate::failure::Failure;
use crate::group_commit::{GroupCommit, GroupCommitStats};
use crate::leader::LeaseLeadership;
use crate::listener::Listener;
use crate::open::open_pool;
use crate::options::PostgresOptions;
use crate::retry::retrying;
use crate::url::redact;
use crate::{apply, claim, create, dead_letters, polls, reads};

/// The task store for a fleet: many `serve` instances on one PostgreSQL
/// database (the schema the URL's `search_path` names, `public` by default).
///
/// - Durable: `create` returns once its row is committed with
///   `synchronous_commit` on; concurrent creations share one transaction
///   and one commit ([`create_stats`](Self::create_stats)), and so do
///   concurrent guarded updates ([`apply_stats`](Self::apply_stats)): a
///   completion is durable when `apply` returns.
/// - Concurrent: claims take rows `FOR UPDATE SKIP LOCKED`; every update is
///   one guarded `UPDATE`.
/// - Resilient: connections come from a pool that replaces broken ones;
///   while the database is down every operation fails promptly with
///   [`StoreError::Unavailable`].
pub struct PostgresStore {
    shown_url: String,
    pool: Pool,
    creations: GroupCommit<NewTask, Result<Created, StoreError>>,
    updates: GroupCommit<UpdateJob, Vec<UpdateOutcome>>,
    leadership: Arc<LeaseLeadership>,
    /// Settings of the listener's own connection.
    listen_config: tokio_postgres::Config,
    /// Started by the first `events` call (a `tasks`/`dlq` command never
    /// needs it).
    listener: OnceLock<Listener>,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user@host:port/db?options=…`), checks
    /// the schema is empty or ours, and migrates it.
    ///
    /// Fails with [`StoreError::Open`] when the URL is invalid or the
    /// database unreachable (the message shows the URL without its
    /// password), and with [`StoreError::NotOurs`] for a schema holding
    /// another application's tables or an mcp-tasks schema newer than this
    /// build; neither is modified. Must run inside a tokio runtime (the
    /// group commits' writer tasks are spawned on it).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(url, PostgresOptions::default()).await
    }

    /// [`open`](PostgresStore::open) with explicit options.
    pub async fn open_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let shown_url = redact(url);
        let (pool, listen_config) = open_pool(url, &shown_url, &options).await?;
        Ok(PostgresStore {
            creations: GroupCommit::start(pool.clone(), create::MAX_BATCH, |tx, news| {
                Box::pin(create::create_all(tx, news))
            }),
            updates: GroupCommit::start(pool.clone(), apply::MAX_BATCH, |tx, jobs| Box::pin(apply::apply_jobs(tx, jobs))),
            leadership: Arc::new(LeaseLeadership::new(pool.clone())),
            listen_config,
            listener: OnceLock::new(),
            pool,
            shown_url,
        })
    }

    /// The database URL, without its password.
    pub fn url(&self) -> &str {
        &self.shown_url
    }

    /// The database server's clock, read through `local` plus a measured
    /// offset (sampled once here; see [`DatabaseClock::spawn_refresher`]).
    /// A fleet's instances use it for every instant they write or judge
    /// (leases, deadlines, the leader's term), so their own clocks' skew
    /// does not matter.
    pub async fn database_clock(&self, local: Arc<dyn Clock>) -> Result<Arc<DatabaseClock>, StoreError> {
        DatabaseClock::sampled(self.pool.clone(), local).await
    }

    /// Commits and `create` calls of the creation group commit so far:
    /// `jobs / commits` is its average batch.
    pub fn create_stats(&self) -> GroupCommitStats {
        self.creations.stats()
    }

    /// Commits and `apply` calls of the update group commit so far: `jobs /
    /// commits` is its average batch.
    pub fn apply_stats(&self) -> GroupCommitStats {
        self.updates.stats()
    }
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore").field("url", &self.shown_url).finish_non_exhaustive()
    }
}

/// Reports a failure as the store's error.
fn report<T>(result: Result<T, Failure>) -> Result<T, StoreError> {
    result.map_err(Failure::into_store)
}

#[async_trait]
impl TaskStore for PostgresStore {
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        self.creations.submit(new).await?
    }

    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        report(reads::get(&self.pool, id).await)
    }

    async fn get_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        report(reads::get_visible(&self.pool, id, principal).await)
    }

    async fn health(&self) -> Result<(), StoreError> {
        let answer = async {
            let client = self.pool.get().await?;
            let row = client.query_one("SELECT pg_is_in_recovery(), to_regclass('tasks') IS NOT NULL", &[]).await?;
            Ok::<(bool, bool), Failure>((row.try_get(0)?, row.try_get(1)?))
        };
        match report(answer.await)? {
            (false, true) => Ok(()),
            (true, _) => {
                Err(StoreError::Unavailable(format!("the PostgreSQL database at {} is a read-only standby", self.shown_url)))
            }
            (false, false) => {
                Err(StoreError::Unavailable(format!("the tasks table is gone from the schema of {}", self.shown_url)))
            }
        }
    }

    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        if polls.is_empty() {
            return Ok(());
        }
        report(retrying(|| polls::record_polls(&self.pool, polls)).await)
    }

    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        report(retrying(|| claim::claim(&self.pool, &params)).await)
    }

    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        if updates.is_empty() {
            return Ok(Vec::new());
        }
        self.updates.submit(UpdateJob { updates, read_back: true }).await
    }

    async fn apply_unread(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        if updates.is_empty() {
            return Ok(Vec::new());
        }
        self.updates.submit(UpdateJob { updates, read_back: false }).await
    }

    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        report(reads::attempts(&self.pool, id).await)
    }

    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        report(reads::sweep_candidates(&self.pool, &query).await)
    }

    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        report(reads::list(&self.pool, &query).await)
    }

    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        report(reads::count_by_status(&self.pool).await)
    }

    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        report(reads::count_by_status_and_tool(&self.pool).await)
    }

    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        report(reads::recent_durations(&self.pool, tool, limit).await)
    }

    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        report(dead_letters::list(&self.pool, &query).await)
    }

    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        report(dead_letters::get(&self.pool, task).await)
    }

    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        report(retrying(|| dead_letters::requeue(&self.pool, task, &new)).await)
    }

    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError> {
        report(dead_letters::purge(&self.pool, &query).await)
    }

    /// A lease row in the schema (`maintenance_leader`): see `leader.rs`.
    fn leadership(&self) -> Arc<dyn Leadership> {
        self.leadership.clone()
    }

    /// `LISTEN` on a dedicated connection (started at the first call, on
    /// the current tokio runtime; `None` outside one): every instance hears
    /// new work, answers and cancels as they commit, and gets
    /// [`StoreEvent::Resync`] after the listener (re)connects.
    fn events(&self) -> Option<broadcast::Receiver<StoreEvent>> {
        tokio::runtime::Handle::try_current().ok()?;
        Some(self.listener.get_or_init(|| Listener::start(self.listen_config.clone())).subscribe())
    }
}
