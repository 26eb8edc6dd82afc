//! A poll that lands after the orphan sweep read its candidates makes the
//! cancel lose its guard: the task stays live.

use crate::support;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_core::{Clock, ManualClock, TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::*;
use serde_json::json;
use support::*;

/// A real store that records a poll right after an orphan sweep reads,
/// as a client would if its `tasks/get` landed at that instant.
#[derive(Debug)]
struct PollDuringSweep {
    inner: MemoryStore,
    clock: ManualClock,
    target: std::sync::Mutex<Option<TaskId>>,
}

#[async_trait]
impl TaskStore for PollDuringSweep {
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        self.inner.create(new).await
    }
    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        self.inner.get(id).await
    }
    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        self.inner.record_polls(polls).await
    }
    async fn claim(&self, p: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner.claim(p).await
    }
    async fn apply(&self, u: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        self.inner.apply(u).await
    }
    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.inner.attempts(id).await
    }
    async fn sweep_candidates(&self, q: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        let rows = self.inner.sweep_candidates(q.clone()).await?;
        if matches!(q, SweepQuery::Unseen { .. }) {
            let target = self.target.lock().unwrap().take();
            if let Some(id) = target {
                self.inner.record_polls(&[(id, self.clock.now())]).await?;
            }
        }
        Ok(rows)
    }
    async fn list(&self, q: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner.list(q).await
    }
    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        self.inner.count_by_status().await
    }
    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        self.inner.count_by_status_and_tool().await
    }
    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        self.inner.recent_durations(tool, limit).await
    }
    async fn list_dead_letters(&self, q: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        self.inner.list_dead_letters(q).await
    }
    async fn get_dead_letter(&self, t: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        self.inner.get_dead_letter(t).await
    }
    async fn requeue_dead_letter(&self, t: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        self.inner.requeue_dead_letter(t, new).await
    }
    async fn purge_dead_letters(&self, q: PurgeQuery) -> Result<u64, StoreError> {
        self.inner.purge_dead_letters(q).await
    }
}

#[tokio::test]
async fn a_poll_after_the_sweep_read_makes_the_orphan_cancel_lose() {
    let clock = clock();
    let store = Arc::new(PollDuringSweep { inner: MemoryStore::new(), clock: clock.clone(), target: Default::default() });
    let rt = builder(store.clone(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let raced = create(&rt, "t").await;
    let abandoned = create(&rt, "t").await;
    clock.advance(Duration::from_secs(900));
    *store.target.lock().unwrap() = Some(raced.clone());

    let report = rt.reap_once().await.unwrap();
    assert_eq!(report.orphaned, 1, "only the task nobody polled");
    assert_eq!(status(&rt, &raced).await, TaskStatus::Working);
    assert_eq!(status(&rt, &abandoned).await, TaskStatus::Cancelled);
}
