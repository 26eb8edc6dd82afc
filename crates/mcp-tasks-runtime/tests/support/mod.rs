//! Shared test support: a manual clock, tools built from closures (and the
//! few kinds every test file wants), a gate a test opens to let a handler
//! finish, and short forms of the runtime steps tests repeat.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_core::{ManualClock, Policy, TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_runtime::{CreateTask, Runtime, RuntimeBuilder, TaskContext, TaskTool, ToolFailure, ToolSpec};
use mcp_tasks_store::{MemoryStore, TaskStore};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};

/// 2026-07-28T10:30:00Z.
pub const T0: Timestamp = Timestamp::from_secs(1_785_234_600);

pub type RunFn = dyn Fn(TaskContext) -> Pin<Box<dyn Future<Output = Result<Value, ToolFailure>> + Send>> + Send + Sync;

/// A tool whose `run` is a closure; counts its runs.
pub struct FnTool {
    pub spec: ToolSpec,
    pub f: Box<RunFn>,
    pub runs: AtomicU32,
}

impl FnTool {
    pub fn new<F, Fut>(name: &str, f: F) -> Arc<FnTool>
    where
        F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolFailure>> + Send + 'static,
    {
        Self::with_spec(ToolSpec::new(name, format!("test tool {name}")), f)
    }

    pub fn with_spec<F, Fut>(spec: ToolSpec, f: F) -> Arc<FnTool>
    where
        F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolFailure>> + Send + 'static,
    {
        Arc::new(FnTool { spec, f: Box::new(move |ctx| Box::pin(f(ctx))), runs: AtomicU32::new(0) })
    }

    pub fn runs(&self) -> u32 {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl TaskTool for FnTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        (self.f)(ctx).await
    }
}

/// A gate handlers wait at: `started` reports each arrival, `open` lets one through.
#[derive(Clone)]
pub struct Gate {
    permits: Arc<Semaphore>,
    arrived: mpsc::UnboundedSender<TaskId>,
}

pub struct GateControl {
    permits: Arc<Semaphore>,
    arrived: mpsc::UnboundedReceiver<TaskId>,
}

pub fn gate() -> (Gate, GateControl) {
    let permits = Arc::new(Semaphore::new(0));
    let (tx, rx) = mpsc::unbounded_channel();
    (Gate { permits: permits.clone(), arrived: tx }, GateControl { permits, arrived: rx })
}

impl Gate {
    /// Reports arrival, then waits to be let through (or for cancellation).
    pub async fn pass(&self, ctx: &TaskContext) -> bool {
        let _ = self.arrived.send(ctx.task_id().clone());
        tokio::select! {
            p = self.permits.acquire() => { p.expect("gate open").forget(); true }
            _ = ctx.cancellation().cancelled() => false,
        }
    }
}

impl Gate {
    /// Reports arrival, then waits to be let through, ignoring cancellation
    /// (a handler that does not cooperate).
    pub async fn pass_stubbornly(&self, ctx: &TaskContext) {
        let _ = self.arrived.send(ctx.task_id().clone());
        self.permits.acquire().await.expect("gate open").forget();
    }
}

/// A tool whose handler reports at `gate`, ignores cancellation, and
/// returns `result` only when the gate opens: a stalled or dying executor.
pub fn held(name: &str, gate: &Gate, result: Value) -> Arc<FnTool> {
    held_with_spec(ToolSpec::new(name, format!("test tool {name}")), gate, result)
}

/// [`held`] with a spec of the test's choosing.
pub fn held_with_spec(spec: ToolSpec, gate: &Gate, result: Value) -> Arc<FnTool> {
    let gate = gate.clone();
    FnTool::with_spec(spec, move |ctx| {
        let (gate, result) = (gate.clone(), result.clone());
        async move {
            gate.pass_stubbornly(&ctx).await;
            Ok(result)
        }
    })
}

/// A tool that succeeds at once with `result`.
pub fn returning(name: &str, result: Value) -> Arc<FnTool> {
    FnTool::new(name, move |_ctx| {
        let result = result.clone();
        async move { Ok(result) }
    })
}

/// A tool that fails every run with `failure`.
pub fn failing(name: &str, failure: ToolFailure) -> Arc<FnTool> {
    FnTool::new(name, move |_ctx| {
        let failure = failure.clone();
        async move { Err(failure) }
    })
}

impl GateControl {
    /// Waits (bounded) until a handler reaches the gate.
    pub async fn arrived(&mut self) -> TaskId {
        tokio::time::timeout(Duration::from_secs(10), self.arrived.recv())
            .await
            .expect("a handler should reach the gate")
            .expect("gate sender alive")
    }
    /// The next arrival, if a handler has reached the gate (waits for one).
    pub async fn arrived_opt(&mut self) -> Option<TaskId> {
        self.arrived.recv().await
    }
    pub fn open(&self, n: usize) {
        self.permits.add_permits(n);
    }
}

pub fn clock() -> ManualClock {
    ManualClock::new(T0)
}

/// How long an unpolled task of the default policy waits for the orphan
/// sweep: the window (15 min) and the poll slack (an eighth of it).
pub fn orphaned_after() -> Duration {
    let retention = Policy::default().retention;
    retention.orphan_after + retention.poll_slack()
}

pub fn memory() -> Arc<dyn TaskStore> {
    Arc::new(MemoryStore::new())
}

pub fn builder(store: Arc<dyn TaskStore>, clock: &ManualClock) -> RuntimeBuilder {
    Runtime::builder(store).clock(Arc::new(clock.clone())).jitter_seed(7).policy(Policy::default())
}

pub async fn create(rt: &Runtime, tool: &str) -> TaskId {
    rt.create_task(CreateTask::new(tool, serde_json::json!({}))).await.expect("create").record.id
}

/// Creates a task of `tool`, has `rt` claim it, and waits until its
/// handler is at the gate.
pub async fn claim_and_hold(rt: &Runtime, gate: &mut GateControl, tool: &str) -> TaskId {
    let id = create(rt, tool).await;
    rt.run_due_once().await.unwrap();
    gate.arrived().await;
    id
}

/// A runtime on `store` whose one task (of tool `t`) is claimed and whose
/// handler is stuck at the returned gate, ignoring cancellation; opening
/// the gate makes it return `result`: an executor that stalled or died.
pub async fn stalled(store: &Arc<dyn TaskStore>, clock: &ManualClock, result: Value) -> (Runtime, GateControl, TaskId) {
    let (g, mut gate) = gate();
    let rt = builder(store.clone(), clock).tool(held("t", &g, result)).build().unwrap();
    let id = claim_and_hold(&rt, &mut gate, "t").await;
    (rt, gate, id)
}

/// Runs what is due and waits until those handlers are settled; returns
/// how many tasks were claimed.
pub async fn run_settled(rt: &Runtime) -> usize {
    let claimed = rt.run_due_once().await.unwrap();
    idle(rt).await;
    claimed
}

/// The stored record of `id` (read straight from the store: no poll is recorded).
pub async fn stored(store: &Arc<dyn TaskStore>, id: &TaskId) -> TaskRecord {
    store.get(id).await.unwrap().expect("task exists")
}

/// Waits (bounded) until every handler in `rt` has returned and been settled.
pub async fn idle(rt: &Runtime) {
    tokio::time::timeout(Duration::from_secs(10), rt.idle()).await.expect("handlers should finish");
}

pub async fn status(rt: &Runtime, id: &TaskId) -> TaskStatus {
    rt.store().get(id).await.unwrap().expect("task exists").status
}

/// Opens (creating) the SQLite store at `path`.
pub fn sqlite(path: &std::path::Path) -> Arc<dyn TaskStore> {
    Arc::new(mcp_tasks_sqlite::SqliteStore::open(path).expect("open sqlite store"))
}

/// A path for a SQLite file in a fresh temporary directory, which lives as
/// long as the returned guard.
pub fn sqlite_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    (dir, path)
}

/// Re-checks `check` until it holds (bounded): for effects of a handler that
/// runs on its own task, never for a sweep.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..1000 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("timed out waiting until {what}");
}
