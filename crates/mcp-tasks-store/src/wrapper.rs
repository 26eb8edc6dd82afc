//! [`StoreWrapper`]: a store in front of another that changes only some of
//! its calls (to count them, slow them, fail them or race them) and passes
//! the rest through. Every type implementing it is a [`TaskStore`].

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};
use tokio::sync::broadcast;

use crate::error::StoreError;
use crate::events::StoreEvent;
use crate::leadership::Leadership;
use crate::params::*;
use crate::store::TaskStore;
use crate::task_read::TaskRead;

/// A store wrapping [`inner`](StoreWrapper::inner): each method passes its
/// call to the same method of the inner store unless the implementation
/// overrides it. An implementation that changes [`apply`](TaskStore::apply)
/// usually wants [`apply_unread`](TaskStore::apply_unread) changed alike
/// (the executor writes outcomes with it).
#[async_trait]
pub trait StoreWrapper: Send + Sync + std::fmt::Debug {
    /// The store behind this one.
    fn inner(&self) -> &dyn TaskStore;

    /// [`TaskStore::create`].
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        self.inner().create(new).await
    }
    /// [`TaskStore::get`].
    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        self.inner().get(id).await
    }
    /// [`TaskStore::get_visible`].
    async fn get_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        self.inner().get_visible(id, principal).await
    }
    /// [`TaskStore::get_visible_for_answer`]: by default this wrapper's own
    /// [`get_visible`](StoreWrapper::get_visible), decoded, so a wrapper
    /// that changes reads changes this one alike.
    async fn get_visible_for_answer(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRead>, StoreError> {
        Ok(StoreWrapper::get_visible(self, id, principal).await?.map(TaskRead::decoded))
    }
    /// [`TaskStore::health`].
    async fn health(&self) -> Result<(), StoreError> {
        self.inner().health().await
    }
    /// [`TaskStore::record_polls`].
    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        self.inner().record_polls(polls).await
    }
    /// [`TaskStore::claim`].
    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner().claim(params).await
    }
    /// [`TaskStore::apply`].
    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        self.inner().apply(updates).await
    }
    /// [`TaskStore::apply_unread`].
    async fn apply_unread(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        self.inner().apply_unread(updates).await
    }
    /// [`TaskStore::attempts`].
    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.inner().attempts(id).await
    }
    /// [`TaskStore::sweep_candidates`].
    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner().sweep_candidates(query).await
    }
    /// [`TaskStore::list`].
    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner().list(query).await
    }
    /// [`TaskStore::count_by_status`].
    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        self.inner().count_by_status().await
    }
    /// [`TaskStore::count_by_status_and_tool`].
    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        self.inner().count_by_status_and_tool().await
    }
    /// [`TaskStore::recent_durations`].
    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        self.inner().recent_durations(tool, limit).await
    }
    /// [`TaskStore::list_dead_letters`].
    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        self.inner().list_dead_letters(query).await
    }
    /// [`TaskStore::get_dead_letter`].
    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        self.inner().get_dead_letter(task).await
    }
    /// [`TaskStore::requeue_dead_letter`].
    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        self.inner().requeue_dead_letter(task, new).await
    }
    /// [`TaskStore::purge_dead_letters`].
    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError> {
        self.inner().purge_dead_letters(query).await
    }
    /// [`TaskStore::leadership`].
    fn leadership(&self) -> Arc<dyn Leadership> {
        self.inner().leadership()
    }
    /// [`TaskStore::events`].
    fn events(&self) -> Option<broadcast::Receiver<StoreEvent>> {
        self.inner().events()
    }
}

#[async_trait]
impl<W: StoreWrapper> TaskStore for W {
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        StoreWrapper::create(self, new).await
    }
    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        StoreWrapper::get(self, id).await
    }
    async fn get_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        StoreWrapper::get_visible(self, id, principal).await
    }
    async fn get_visible_for_answer(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRead>, StoreError> {
        StoreWrapper::get_visible_for_answer(self, id, principal).await
    }
    async fn health(&self) -> Result<(), StoreError> {
        StoreWrapper::health(self).await
    }
    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        StoreWrapper::record_polls(self, polls).await
    }
    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        StoreWrapper::claim(self, params).await
    }
    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        StoreWrapper::apply(self, updates).await
    }
    async fn apply_unread(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        StoreWrapper::apply_unread(self, updates).await
    }
    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        StoreWrapper::attempts(self, id).await
    }
    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        StoreWrapper::sweep_candidates(self, query).await
    }
    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        StoreWrapper::list(self, query).await
    }
    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        StoreWrapper::count_by_status(self).await
    }
    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        StoreWrapper::count_by_status_and_tool(self).await
    }
    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        StoreWrapper::recent_durations(self, tool, limit).await
    }
    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        StoreWrapper::list_dead_letters(self, query).await
    }
    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        StoreWrapper::get_dead_letter(self, task).await
    }
    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        StoreWrapper::requeue_dead_letter(self, task, new).await
    }
    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError> {
        StoreWrapper::purge_dead_letters(self, query).await
    }
    fn leadership(&self) -> Arc<dyn Leadership> {
        StoreWrapper::leadership(self)
    }
    fn events(&self) -> Option<broadcast::Receiver<StoreEvent>> {
        StoreWrapper::events(self)
    }
}
