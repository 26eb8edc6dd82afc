//! One claim fills every free executor slot in one store call, and takes
//! nothing beyond them; a completion that lost its task between the claim
//! and its write (on SQLite, whose executor writes skip reading the row
//! back) changes nothing.

use crate::support;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_core::{Clock, TaskRecord, TaskStatus};
use mcp_tasks_store::*;
use serde_json::json;
use support::*;

/// A real store that records the limit of every claim made through it.
#[derive(Debug)]
struct CountingClaims {
    inner: Arc<dyn TaskStore>,
    limits: Mutex<Vec<usize>>,
}

impl CountingClaims {
    fn limits(&self) -> Vec<usize> {
        self.limits.lock().unwrap().clone()
    }
}

#[async_trait]
impl StoreWrapper for CountingClaims {
    fn inner(&self) -> &dyn TaskStore {
        self.inner.as_ref()
    }
    async fn claim(&self, p: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        self.limits.lock().unwrap().push(p.limit);
        self.inner.claim(p).await
    }
}

#[tokio::test]
async fn one_claim_fills_every_free_slot_and_takes_no_more() {
    let (_dir, path) = sqlite_file();
    let store = Arc::new(CountingClaims { inner: sqlite(&path), limits: Mutex::new(Vec::new()) });
    let clock = clock();
    let (g, mut gate) = gate();
    let rt = builder(store.clone(), &clock).concurrency(3).tool(held("t", &g, json!({}))).build().unwrap();
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(create(&rt, "t").await);
    }
    assert_eq!(rt.run_due_once().await.unwrap(), 3);
    assert_eq!(store.limits(), [3], "one store call asked for every free slot");
    let leased = |records: Vec<TaskRecord>| records.iter().filter(|r| r.lease.is_some()).count();
    let mut rows = Vec::new();
    for id in &ids {
        rows.push(stored(&(store.clone() as Arc<dyn TaskStore>), id).await);
    }
    assert_eq!(leased(rows), 3, "exactly as many tasks leased as there were slots");
    for _ in 0..3 {
        gate.arrived().await;
    }
    assert_eq!(rt.run_due_once().await.unwrap(), 0);
    assert_eq!(store.limits(), [3], "no free slot: no store call");

    gate.open(2);
    eventually("two slots free up", || async { rt.running() == 1 }).await;
    assert_eq!(rt.run_due_once().await.unwrap(), 2);
    assert_eq!(store.limits(), [3, 2], "the two freed slots, in one call");
    gate.arrived().await;
    gate.arrived().await;
    gate.open(3);
    idle(&rt).await;
    for id in &ids {
        assert_eq!(status(&rt, id).await, TaskStatus::Completed);
    }
}

#[tokio::test]
async fn a_completion_after_a_timeout_changes_nothing_on_sqlite() {
    let (_dir, path) = sqlite_file();
    let store = sqlite(&path);
    let clock = clock();
    let (worker, gate, id) = stalled(&store, &clock, json!({"late": true})).await;
    let reaper = builder(store.clone(), &clock).build().unwrap();
    clock.advance(Duration::from_secs(1800));
    assert_eq!(reaper.reap_once().await.unwrap().timed_out, 1);
    let timed_out = stored(&store, &id).await;
    let history = store.attempts(&id).await.unwrap();
    assert_eq!(timed_out.status, TaskStatus::Failed);

    gate.open(1);
    idle(&worker).await;
    assert_eq!(stored(&store, &id).await, timed_out, "the late result was discarded");
    assert_eq!(store.attempts(&id).await.unwrap(), history, "and recorded no attempt");
}

#[tokio::test]
async fn a_completion_after_a_takeover_changes_nothing_on_sqlite() {
    let (_dir, path) = sqlite_file();
    let store = sqlite(&path);
    let clock = clock();
    let (worker, gate, id) = stalled(&store, &clock, json!({"late": true})).await;
    // The task is handed back (as triage would after a lapse) and claimed by another executor.
    let released =
        GuardedUpdate::change(Guard::id(id.clone()), Change { now: clock.now(), lease: Some(None), ..Change::default() });
    assert!(store.apply(vec![released]).await.unwrap()[0].applied());
    let other = store
        .claim(ClaimParams {
            owner: "another/1".into(),
            now: clock.now(),
            lease_expires_at: clock.now().plus(Duration::from_secs(60)),
            limit: 1,
            tools: None,
        })
        .await
        .unwrap();
    assert_eq!(other.len(), 1);
    let taken = stored(&store, &id).await;

    gate.open(1);
    idle(&worker).await;
    assert_eq!(stored(&store, &id).await, taken, "the first executor's completion lost to the new holder");
    assert!(store.attempts(&id).await.unwrap().is_empty(), "and recorded no attempt");
}
