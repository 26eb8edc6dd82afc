//! Dispatch at creation: with a slot free and no queued work known, a new
//! task is inserted already leased to this runtime's executor and starts
//! without a claim; it never overtakes queued work, never exceeds the
//! executor's bounds, and once shutdown has begun it is handed back.

use crate::support;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mcp_tasks_core::{TaskRecord, TaskStatus};
use mcp_tasks_runtime::{CreateTask, Runtime};
use mcp_tasks_store::*;
use serde_json::json;
use support::*;
use tokio::sync::Semaphore;

/// A real store that counts the claims that returned and the tasks they
/// took, and can hold creations at a gate.
#[derive(Debug)]
struct Watched {
    inner: Arc<dyn TaskStore>,
    claims_done: AtomicUsize,
    claimed: Mutex<Vec<TaskRecord>>,
    /// When set, each creation waits for a permit after it is written.
    hold_creations: Option<Arc<Semaphore>>,
}

impl Watched {
    fn new(inner: Arc<dyn TaskStore>, hold_creations: Option<Arc<Semaphore>>) -> Arc<Self> {
        Arc::new(Watched { inner, claims_done: AtomicUsize::new(0), claimed: Mutex::new(Vec::new()), hold_creations })
    }
    fn claimed_ids(&self) -> Vec<mcp_tasks_core::TaskId> {
        self.claimed.lock().unwrap().iter().map(|r| r.id.clone()).collect()
    }
}

#[async_trait]
impl StoreWrapper for Watched {
    fn inner(&self) -> &dyn TaskStore {
        self.inner.as_ref()
    }
    async fn claim(&self, p: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        let claimed = self.inner.claim(p).await;
        if let Ok(records) = &claimed {
            self.claimed.lock().unwrap().extend(records.iter().cloned());
        }
        self.claims_done.fetch_add(1, Ordering::SeqCst);
        claimed
    }
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        let created = self.inner.create(new).await;
        if let Some(hold) = &self.hold_creations {
            hold.acquire().await.expect("gate open").forget();
        }
        created
    }
}

/// Starts `rt` and waits until its first claim has looked at the queue.
async fn started(rt: &Runtime, store: &Watched) {
    rt.start().await.unwrap();
    eventually("the first claim has looked", || async { store.claims_done.load(Ordering::SeqCst) > 0 }).await;
}

async fn create_view(rt: &Runtime, tool: &str) -> TaskRecord {
    rt.create_task(CreateTask::new(tool, json!({}))).await.expect("create").record
}

/// Starts creating a task of `t` on `rt`, whose store holds creations at
/// its gate, and waits until the task is written: the creation has not
/// returned yet.
async fn written_then_held(rt: &Arc<Runtime>) -> tokio::task::JoinHandle<TaskRecord> {
    let creating = {
        let rt = rt.clone();
        tokio::spawn(async move { create_view(&rt, "t").await })
    };
    eventually("the creation is written", || async {
        rt.store().count_by_status().await.unwrap().values().sum::<u64>() == 1
    })
    .await;
    creating
}

#[tokio::test]
async fn a_task_created_with_a_free_slot_starts_leased_without_a_claim() {
    let (_dir, path) = sqlite_file();
    let store = Watched::new(sqlite(&path), None);
    let clock = clock();
    let (g, mut gate) = gate();
    let rt = builder(store.clone(), &clock).tool(held("t", &g, json!({"ok": true}))).build().unwrap();
    started(&rt, &store).await;

    let created = create_view(&rt, "t").await;
    let lease = created.lease.clone().expect("the creation wrote this executor's lease");
    assert!(lease.owner.starts_with(rt.executor_id()), "{lease:?} is not held by {}", rt.executor_id());
    assert_eq!(gate.arrived().await, created.id, "its handler started");
    assert_eq!(stored(rt.store(), &created.id).await.lease, Some(lease));
    gate.open(1);
    eventually("it completes", || async { status(&rt, &created.id).await == TaskStatus::Completed }).await;
    assert!(store.claimed_ids().is_empty(), "no claim took it: {:?}", store.claimed_ids());
    rt.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn off_or_not_started_every_task_waits_for_a_claim() {
    let clock = clock();
    let store = Watched::new(memory(), None);
    let off = builder(store.clone(), &clock).dispatch_at_creation(false).tool(returning("t", json!({}))).build().unwrap();
    started(&off, &store).await;
    let queued = create_view(&off, "t").await;
    assert_eq!(queued.lease, None, "dispatch is off");
    eventually("a claim runs it", || async { status(&off, &queued.id).await == TaskStatus::Completed }).await;
    assert_eq!(store.claimed_ids(), vec![queued.id.clone()]);
    off.shutdown(std::time::Duration::from_secs(5)).await;

    let idle_rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    assert_eq!(create_view(&idle_rt, "t").await.lease, None, "no claim loop: nothing is dispatched");
}

#[tokio::test]
async fn a_new_task_never_overtakes_a_queued_one() {
    let store = Watched::new(memory(), None);
    let clock = clock();
    let (g, mut gate) = gate();
    let rt = builder(store.clone(), &clock).concurrency(1).tool(held("t", &g, json!({}))).build().unwrap();
    started(&rt, &store).await;

    let first = create_view(&rt, "t").await;
    assert!(first.lease.is_some(), "the free slot takes the first task at creation");
    assert_eq!(gate.arrived().await, first.id);
    // Claims take equal `run_at`s in no set order: each task is due later.
    clock.advance(std::time::Duration::from_millis(1));
    let second = create_view(&rt, "t").await;
    assert_eq!(second.lease, None, "no free slot: queued");
    // The slot frees; whenever the next creation lands (before the claim,
    // during it, or after), the queued task is known and goes first.
    gate.open(1);
    clock.advance(std::time::Duration::from_millis(1));
    let third = create_view(&rt, "t").await;
    assert_eq!(third.lease, None, "a queued task was waiting: the new one queues behind it");
    assert_eq!(gate.arrived().await, second.id, "the queued task runs next");
    gate.open(1);
    assert_eq!(gate.arrived().await, third.id);
    gate.open(1);
    assert_eq!(store.claimed_ids(), vec![second.id, third.id]);
    rt.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn concurrent_creations_never_run_more_handlers_than_slots() {
    let (_dir, path) = sqlite_file();
    let store = Watched::new(sqlite(&path), None);
    let clock = clock();
    let executing = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (e, m) = (executing.clone(), most.clone());
    let tool = FnTool::new("t", move |_ctx| {
        let (e, m) = (e.clone(), m.clone());
        async move {
            let now = e.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(now, Ordering::SeqCst);
            tokio::task::yield_now().await;
            e.fetch_sub(1, Ordering::SeqCst);
            Ok(json!({}))
        }
    });
    // No timer claim within the test: every queued task is claimed on a
    // wake-up, or the test times out (a lost wake-up).
    let quiet = std::time::Duration::from_secs(3600);
    let rt = Arc::new(
        builder(store.clone(), &clock).concurrency(2).max_waiting(0).claim_interval(quiet).tool(tool).build().unwrap(),
    );
    started(&rt, &store).await;
    let mut creators = Vec::new();
    for _ in 0..40 {
        let rt = rt.clone();
        creators.push(tokio::spawn(async move { create_view(&rt, "t").await }));
    }
    let mut ids = Vec::new();
    let mut dispatched = 0;
    for c in creators {
        let record = c.await.unwrap();
        dispatched += usize::from(record.lease.is_some());
        ids.push(record.id);
    }
    for id in &ids {
        eventually("every task completes", || async { status(&rt, id).await == TaskStatus::Completed }).await;
    }
    assert!(most.load(Ordering::SeqCst) <= 2, "{} handlers ran at once with 2 slots", most.load(Ordering::SeqCst));
    assert!(dispatched >= 1, "the first creation found a free slot");
    assert_eq!(dispatched + store.claimed_ids().len(), 40, "each task ran once: dispatched or claimed");
    rt.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_dispatch_that_meets_shutdown_is_handed_back_not_run() {
    let (_dir, path) = sqlite_file();
    let hold = Arc::new(Semaphore::new(0));
    let store = Watched::new(sqlite(&path), Some(hold.clone()));
    let clock = clock();
    let tool = returning("t", json!({}));
    let rt = Arc::new(builder(store.clone(), &clock).tool(tool.clone()).build().unwrap());
    started(&rt, &store).await;

    // The task is written, leased to this executor; shutdown runs to its
    // end before the creation returns.
    let creating = written_then_held(&rt).await;
    rt.shutdown(std::time::Duration::from_secs(5)).await;
    hold.add_permits(1);
    let created = creating.await.unwrap();
    assert!(created.lease.is_some(), "it was dispatched");
    let r = stored(rt.store(), &created.id).await;
    assert_eq!((r.status, r.attempt, r.lease), (TaskStatus::Working, 1, None), "handed back, attempt unspent");
    assert_eq!(tool.runs(), 0, "no handler started after shutdown");
}

#[tokio::test]
async fn a_claim_leaves_slots_to_dispatch_but_a_backlog_still_fills_them_all() {
    let shared = memory();
    let store = Watched::new(shared.clone(), None);
    let clock = clock();
    let (g, mut gate) = gate();
    // No timer claim within the test: only wake-ups claim.
    let quiet = std::time::Duration::from_secs(3600);
    let rt =
        builder(store.clone(), &clock).concurrency(4).claim_interval(quiet).tool(held("t", &g, json!({}))).build().unwrap();
    started(&rt, &store).await;
    // Another instance on the same store queues four tasks this one does not know of.
    let other = builder(shared, &clock).tool(returning("t", json!({}))).build().unwrap();
    let mut queued = Vec::new();
    for _ in 0..4 {
        queued.push(create(&other, "t").await);
    }
    // The first claim since the queue drained takes three of the four free
    // slots, finds them filled, and claims again at once for the last.
    assert_eq!(rt.run_due_once().await.unwrap(), 3, "a quarter of the slots left to dispatch");
    let mut arrived = Vec::new();
    for _ in 0..4 {
        arrived.push(gate.arrived().await);
    }
    arrived.sort();
    queued.sort();
    assert_eq!(arrived, queued, "the backlog fills every slot without waiting for the timer");
    gate.open(4);
    rt.shutdown(std::time::Duration::from_secs(5)).await;
}

/// A real store whose first creation is written nowhere: it waits at a
/// gate, then fails as an unreachable store would.
#[derive(Debug)]
struct FirstCreationFails {
    inner: Arc<dyn TaskStore>,
    creations: AtomicUsize,
    gate: Arc<Semaphore>,
}

#[async_trait]
impl StoreWrapper for FirstCreationFails {
    fn inner(&self) -> &dyn TaskStore {
        self.inner.as_ref()
    }
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        if self.creations.fetch_add(1, Ordering::SeqCst) == 0 {
            self.gate.acquire().await.expect("gate open").forget();
            return Err(StoreError::Unavailable("the test's store is down".into()));
        }
        self.inner.create(new).await
    }
}

#[tokio::test]
async fn a_failed_dispatched_creation_gives_its_slot_to_the_queue() {
    let gate = Arc::new(Semaphore::new(0));
    let failing_store = Arc::new(FirstCreationFails { inner: memory(), creations: AtomicUsize::new(0), gate: gate.clone() });
    let store = Watched::new(failing_store.clone(), None);
    let clock = clock();
    let quiet = std::time::Duration::from_secs(3600);
    let rt = Arc::new(
        builder(store.clone(), &clock).concurrency(1).claim_interval(quiet).tool(returning("t", json!({}))).build().unwrap(),
    );
    started(&rt, &store).await;

    // The first creation takes the only slot, then its store call hangs.
    let failing = {
        let rt = rt.clone();
        tokio::spawn(async move { rt.create_task(CreateTask::new("t", json!({}))).await })
    };
    eventually("the first creation holds the slot", || async { failing_store.creations.load(Ordering::SeqCst) == 1 }).await;
    // The next one finds no slot: queued, and a claim finds no slot either.
    let queued = create_view(&rt, "t").await;
    assert_eq!(queued.lease, None);
    assert_eq!(rt.run_due_once().await.unwrap(), 0, "no free slot");
    // The first creation fails; its slot must reach the queued task.
    gate.add_permits(1);
    assert!(failing.await.unwrap().is_err());
    eventually("the queued task runs", || async { status(&rt, &queued.id).await == TaskStatus::Completed }).await;
    rt.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_dispatched_creation_whose_caller_goes_away_still_runs() {
    let hold = Arc::new(Semaphore::new(0));
    let store = Watched::new(memory(), Some(hold.clone()));
    let clock = clock();
    let quiet = std::time::Duration::from_secs(3600);
    let rt = Arc::new(builder(store.clone(), &clock).claim_interval(quiet).tool(returning("t", json!({}))).build().unwrap());
    started(&rt, &store).await;

    let caller = written_then_held(&rt).await;
    // The request is dropped after the insert wrote this executor's lease.
    caller.abort();
    assert!(caller.await.unwrap_err().is_cancelled());
    hold.add_permits(1);
    let id = rt.store().list(ListQuery { limit: 10, ..ListQuery::default() }).await.unwrap().pop().expect("one task").id;
    eventually("its handler ran anyway", || async { status(&rt, &id).await == TaskStatus::Completed }).await;
    assert!(store.claimed_ids().is_empty(), "no claim took it: {:?}", store.claimed_ids());
    rt.shutdown(std::time::Duration::from_secs(5)).await;
}
