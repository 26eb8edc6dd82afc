//! E1 — does the handle survive the restart? (paper §6.1, Table 1)
//!
//! Twenty `long_running_report` tasks are created through the real
//! [`Runtime`] on a manual clock: twelve quick reports (0 s) and eight of a
//! minute. Five seconds later the runtime's own executor claims all twenty
//! and runs their handlers; the twelve quick ones return and the executor
//! writes their completions through its real settle path (guarded on its
//! lease). Then the process "crashes" with the eight still running: the
//! async runtime it all ran on is dropped, so handlers, runtime and store
//! vanish without a shutdown or another write. Thirty seconds later a new
//! store of the same kind is opened (the same SQLite file; a fresh, empty
//! memory store), a new runtime runs the real restart triage, and the client
//! asks for every handle.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{ManualClock, Policy, TaskId, TaskStatus, Timestamp};
use mcp_tasks_runtime::{CreateTask, Runtime, RuntimeError, TriageScope};
use mcp_tasks_store::{MemoryStore, TaskStore};
use serde::Serialize;

use crate::error::StudyError;
use crate::progress::Progress;
use crate::table::{Table, percent};
use crate::tool::{LongRunningReport, TOOL_NAME};

/// Handles the client holds.
pub const ISSUED: usize = 20;
/// Tasks finished before the crash.
pub const COMPLETED: usize = 12;
/// Where the manual clock starts, seconds since the epoch.
pub const CLOCK_START_S: i64 = 1_000_000;
/// How long an in-flight report takes: far longer than the run before the crash.
const IN_FLIGHT_REPORT_S: u64 = 60;
/// How long (real time) the study waits for the quick reports' completions
/// to be written before it calls the run broken.
const SETTLE_DEADLINE: Duration = Duration::from_secs(30);

/// Which store the server ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// `MemoryStore`: tasks live in the server process.
    Memory,
    /// `SqliteStore`: a database file (WAL, synchronous=FULL).
    Sqlite,
}

impl StoreKind {
    /// The row label as the paper prints it.
    pub fn label(self) -> &'static str {
        match self {
            StoreKind::Memory => "in-memory",
            StoreKind::Sqlite => "SQLite (WAL, synchronous=FULL)",
        }
    }
}

/// One row of Table 1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E1Row {
    /// The store.
    pub store: StoreKind,
    /// Handles issued.
    pub issued: usize,
    /// Finished before the crash.
    pub completed: usize,
    /// Still working when the server died.
    pub in_flight: usize,
    /// Handles `tasks/get` still answers after the restart.
    pub resolved: usize,
    /// Handles the restarted server has never heard of.
    pub lost: usize,
    /// In-flight tasks triage handed back to run again (attempt 2).
    pub resumable: usize,
    /// Completed tasks whose result is still there.
    pub results_kept: usize,
    /// `resolved / issued`.
    pub survival: f64,
    /// Why the handles that were lost were lost.
    pub reason: String,
}

/// Opens a store of `kind`; for SQLite, the file at `path`.
fn open(kind: StoreKind, path: &Path) -> Result<Arc<dyn TaskStore>, StudyError> {
    Ok(match kind {
        StoreKind::Memory => Arc::new(MemoryStore::new()),
        StoreKind::Sqlite => Arc::new(
            mcp_tasks_sqlite::SqliteStore::open(path)
                .map_err(|e| StudyError::runtime(format!("E1 opening {}", path.display()), e))?,
        ),
    })
}

fn runtime(store: Arc<dyn TaskStore>, clock: &ManualClock) -> Result<Runtime, StudyError> {
    Runtime::builder(store)
        .policy(Policy::default())
        .clock(Arc::new(clock.clone()))
        .tool(Arc::new(LongRunningReport::default()))
        // Room to run all of them at once, as one claim.
        .concurrency(ISSUED)
        .single_node(true)
        .build()
        .map_err(|e| StudyError::runtime("E1 runtime", e))
}

/// Until the crash: create the handles, let the executor claim them all
/// and complete the quick ones; returns the handles. Runs on its own async
/// runtime, whose drop is the crash.
async fn before_crash(kind: StoreKind, path: &Path, clock: &ManualClock) -> Result<Vec<TaskId>, StudyError> {
    let err = |what: &'static str| move |e: RuntimeError| StudyError::runtime(format!("E1 {what}"), e);
    let rt = runtime(open(kind, path)?, clock)?;
    let mut handles = Vec::with_capacity(ISSUED);
    for i in 0..ISSUED {
        let seconds = if i < COMPLETED { 0 } else { IN_FLIGHT_REPORT_S };
        let view = rt
            .create_task(CreateTask::new(TOOL_NAME, serde_json::json!({ "seconds": seconds })))
            .await
            .map_err(err("create"))?;
        handles.push(view.record.id);
    }
    clock.advance(Duration::from_secs(5));
    let started = rt.run_due_once().await.map_err(err("claim"))?;
    if started != ISSUED {
        return Err(StudyError::runtime("E1 claim", format!("the executor started {started} of {ISSUED} tasks")));
    }
    // The quick reports return at once; their handlers leave the registry
    // only after the executor has written their completions.
    let deadline = std::time::Instant::now() + SETTLE_DEADLINE;
    while rt.running() > ISSUED - COMPLETED {
        if std::time::Instant::now() > deadline {
            return Err(StudyError::runtime("E1 complete", format!("{} handlers still running", rt.running())));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(handles)
}

/// Runs the scenario on `kind`.
pub async fn run_store(kind: StoreKind) -> Result<E1Row, StudyError> {
    let dir = tempfile::tempdir().map_err(|e| StudyError::runtime("E1 temporary directory", e))?;
    let path = dir.path().join("tasks.db");
    let clock = ManualClock::new(Timestamp::from_secs(CLOCK_START_S));
    let err = |what: &'static str| move |e: RuntimeError| StudyError::runtime(format!("E1 {what}"), e);

    let handles = {
        let (path, clock): (PathBuf, ManualClock) = (path.clone(), clock.clone());
        tokio::task::spawn_blocking(move || {
            let process = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| StudyError::runtime("E1 server process", e))?;
            let handles = process.block_on(before_crash(kind, &path, &clock));
            // The crash: every task of the process (the eight handlers still
            // sleeping among them) is dropped mid-await, and with them the
            // runtime and the store, without a shutdown or another write.
            drop(process);
            handles
        })
        .await
        .map_err(|e| StudyError::runtime("E1 server process", e))??
    };

    clock.advance(Duration::from_secs(30));
    let rt = runtime(open(kind, &path)?, &clock)?;
    rt.triage_once(TriageScope::AllLeases).await.map_err(err("restart triage"))?;

    let (mut resolved, mut resumable, mut results_kept) = (0, 0, 0);
    for id in &handles {
        match rt.get_task(id, None).await {
            Ok(view) => {
                resolved += 1;
                let r = &view.record;
                if r.status == TaskStatus::Working && r.attempt == 2 && r.lease.is_none() {
                    resumable += 1;
                }
                if r.status == TaskStatus::Completed && r.result.is_some() {
                    results_kept += 1;
                }
            }
            Err(RuntimeError::TaskNotFound(_)) => {}
            Err(e) => return Err(err("tasks/get")(e)),
        }
    }
    let lost = ISSUED - resolved;
    let reason = match (kind, lost) {
        (_, 0) => "none lost: every row, and every completed result, was durable before the crash".into(),
        (StoreKind::Memory, _) => format!(
            "the {lost} tasks, the {COMPLETED} completed results among them, lived only in the dead process's memory"
        ),
        (StoreKind::Sqlite, _) => format!("{lost} rows missing from the database file"),
    };
    Ok(E1Row {
        store: kind,
        issued: ISSUED,
        completed: COMPLETED,
        in_flight: ISSUED - COMPLETED,
        resolved,
        lost,
        resumable,
        results_kept,
        survival: resolved as f64 / ISSUED as f64,
        reason,
    })
}

/// E1's result: in-memory first, then SQLite.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E1Result {
    /// The rows.
    pub rows: Vec<E1Row>,
}

/// Runs E1 on both stores.
pub async fn run(progress: &dyn Progress) -> Result<E1Result, StudyError> {
    progress.stage("E1 restart", 2);
    let mut rows = Vec::new();
    for kind in [StoreKind::Memory, StoreKind::Sqlite] {
        rows.push(run_store(kind).await?);
        progress.advance(1);
    }
    Ok(E1Result { rows })
}

impl E1Result {
    /// Table 1, as the paper prints it.
    pub fn table1(&self) -> Table {
        let mut t = Table::new(
            format!(
                "Table 1 — handle survival across a restart ({ISSUED} handles, {COMPLETED} completed, {} in flight).",
                ISSUED - COMPLETED
            ),
            &["store", "resolve after restart", "lost", "resumable", "survival"],
        );
        for r in &self.rows {
            t.push(vec![
                r.store.label().into(),
                r.resolved.to_string(),
                r.lost.to_string(),
                r.resumable.to_string(),
                percent(r.survival, 0),
            ]);
        }
        t
    }
}
