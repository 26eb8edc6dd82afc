//! [`MeasuredStore`]: the runtime's store, timed. Every call the runtime
//! makes is recorded as the store latency histogram by operation (and
//! counted when it fails), the same way for every backend.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::{
    AttemptRecord, ClaimParams, Created, DeadLetter, DeadLetterQuery, GuardedUpdate, Leadership, ListQuery, NewTask,
    PurgeQuery, StoreError, StoreEvent, SweepQuery, TaskRead, TaskStore, UpdateOutcome,
};
use tokio::sync::broadcast;

use crate::metrics::Metrics;

/// A store whose calls are timed into [`Metrics`]; answers unchanged.
#[derive(Debug)]
pub(crate) struct MeasuredStore {
    inner: Arc<dyn TaskStore>,
    metrics: Metrics,
}

impl MeasuredStore {
    pub(crate) fn new(inner: Arc<dyn TaskStore>, metrics: Metrics) -> Self {
        MeasuredStore { inner, metrics }
    }

    async fn timed<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let started = Instant::now();
        let result = call.await;
        self.metrics.store_call(operation, started.elapsed(), result.is_err());
        result
    }
}

#[async_trait]
impl TaskStore for MeasuredStore {
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        self.timed("create", self.inner.create(new)).await
    }

    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        self.timed("get", self.inner.get(id)).await
    }

    async fn get_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        self.timed("get", self.inner.get_visible(id, principal)).await
    }

    async fn get_visible_for_answer(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRead>, StoreError> {
        self.timed("get", self.inner.get_visible_for_answer(id, principal)).await
    }

    async fn health(&self) -> Result<(), StoreError> {
        self.timed("health", self.inner.health()).await
    }

    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        self.timed("record_polls", self.inner.record_polls(polls)).await
    }

    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        self.timed("claim", self.inner.claim(params)).await
    }

    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        self.timed("apply", self.inner.apply(updates)).await
    }

    async fn apply_unread(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        self.timed("apply", self.inner.apply_unread(updates)).await
    }

    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.timed("attempts", self.inner.attempts(id)).await
    }

    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.timed("sweep_candidates", self.inner.sweep_candidates(query)).await
    }

    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.timed("list", self.inner.list(query)).await
    }

    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        self.timed("count_by_status", self.inner.count_by_status()).await
    }

    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        self.timed("count_by_status_and_tool", self.inner.count_by_status_and_tool()).await
    }

    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        self.timed("recent_durations", self.inner.recent_durations(tool, limit)).await
    }

    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        self.timed("list_dead_letters", self.inner.list_dead_letters(query)).await
    }

    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        self.timed("get_dead_letter", self.inner.get_dead_letter(task)).await
    }

    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        self.timed("requeue_dead_letter", self.inner.requeue_dead_letter(task, new)).await
    }

    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError> {
        self.timed("purge_dead_letters", self.inner.purge_dead_letters(query)).await
    }

    fn leadership(&self) -> Arc<dyn Leadership> {
        self.inner.leadership()
    }

    fn events(&self) -> Option<broadcast::Receiver<StoreEvent>> {
        self.inner.events()
    }
}
