//! A poll that lands after the orphan sweep read its candidates makes the
//! cancel lose its guard: the task stays live.

use crate::support;
use std::sync::Arc;

use async_trait::async_trait;
use mcp_tasks_core::{Clock, ManualClock, TaskId, TaskRecord, TaskStatus};
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
impl StoreWrapper for PollDuringSweep {
    fn inner(&self) -> &dyn TaskStore {
        &self.inner
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
}

#[tokio::test]
async fn a_poll_after_the_sweep_read_makes_the_orphan_cancel_lose() {
    let clock = clock();
    let store = Arc::new(PollDuringSweep { inner: MemoryStore::new(), clock: clock.clone(), target: Default::default() });
    let rt = builder(store.clone(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let raced = create(&rt, "t").await;
    let abandoned = create(&rt, "t").await;
    clock.advance(orphaned_after());
    *store.target.lock().unwrap() = Some(raced.clone());

    let report = rt.reap_once().await.unwrap();
    assert_eq!(report.orphaned, 1, "only the task nobody polled");
    assert_eq!(status(&rt, &raced).await, TaskStatus::Working);
    assert_eq!(status(&rt, &abandoned).await, TaskStatus::Cancelled);
}
