//! E1 — does the handle survive the restart? (paper §6.1, Table 1)
//!
//! Twenty `long_running_report` tasks are created through the real
//! [`Runtime`] on a manual clock; five seconds later an executor claims them
//! all from the store and finishes the first twelve with guarded updates, as
//! the runtime's executor does. Then the process "crashes": runtime and store
//! are dropped with no shutdown. Thirty seconds later a new store of the same
//! kind is opened (the same SQLite file; a fresh, empty memory store), a new
//! runtime runs the real restart triage, and the client asks for every handle.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Lease, ManualClock, Policy, TaskId, TaskStatus, Timestamp};
use mcp_tasks_runtime::{CreateTask, Runtime, RuntimeError, TriageScope};
use mcp_tasks_store::{Change, ClaimParams, Guard, GuardedUpdate, MemoryStore, TaskStore};
use serde::Serialize;

use crate::error::StudyError;
use crate::progress::Progress;
use crate::table::{Table, percent};
use crate::tool::{LongRunningReport, TOOL_NAME, report_result};

/// Handles the client holds.
pub const ISSUED: usize = 20;
/// Tasks finished before the crash.
pub const COMPLETED: usize = 12;
/// Where the manual clock starts, seconds since the epoch.
pub const CLOCK_START_S: i64 = 1_000_000;
/// The executor that dies in the crash.
const DEAD_EXECUTOR: &str = "study-executor-before-crash";

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
fn open(kind: StoreKind, path: &std::path::Path) -> Result<Arc<dyn TaskStore>, StudyError> {
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
        .single_node(true)
        .build()
        .map_err(|e| StudyError::runtime("E1 runtime", e))
}

/// Runs the scenario on `kind`.
pub async fn run_store(kind: StoreKind) -> Result<E1Row, StudyError> {
    let dir = tempfile::tempdir().map_err(|e| StudyError::runtime("E1 temporary directory", e))?;
    let path = dir.path().join("tasks.db");
    let clock = ManualClock::new(Timestamp::from_secs(CLOCK_START_S));
    let err = |what: &'static str| move |e: RuntimeError| StudyError::runtime(format!("E1 {what}"), e);
    let serr = |what: &'static str| move |e: mcp_tasks_store::StoreError| StudyError::runtime(format!("E1 {what}"), e);

    // Before the crash.
    let handles: Vec<TaskId> = {
        let rt = runtime(open(kind, &path)?, &clock)?;
        let mut handles = Vec::with_capacity(ISSUED);
        for _ in 0..ISSUED {
            let view = rt
                .create_task(CreateTask::new(TOOL_NAME, serde_json::json!({"seconds": 60})))
                .await
                .map_err(err("create"))?;
            handles.push(view.record.id);
        }
        clock.advance(Duration::from_secs(5));
        let now = clock_now(&clock);
        let policy = rt.policy().clone();
        let claimed = rt
            .store()
            .claim(ClaimParams {
                owner: DEAD_EXECUTOR.into(),
                now,
                lease_expires_at: now.plus(policy.lease_duration),
                limit: ISSUED,
                tools: Some(vec![TOOL_NAME.into()]),
            })
            .await
            .map_err(serr("claim"))?;
        if claimed.len() != ISSUED {
            return Err(StudyError::runtime("E1 claim", format!("claimed {} of {ISSUED} tasks", claimed.len())));
        }
        let finish: Vec<GuardedUpdate> = handles[..COMPLETED]
            .iter()
            .map(|id| {
                let guard = Guard {
                    status: Some(TaskStatus::Working),
                    lease_owner: Some(DEAD_EXECUTOR.into()),
                    ..Guard::id(id.clone())
                };
                GuardedUpdate::change(
                    guard,
                    Change {
                        now,
                        status: Some(TaskStatus::Completed),
                        status_message: Some(Some("report ready".into())),
                        run_at: Some(None),
                        lease: Some(None::<Lease>),
                        terminal_at: Some(now),
                        expires_at: Some(Some(policy.retention.expires_at(TaskStatus::Completed, now))),
                        result: Some(report_result(60)),
                        ..Change::default()
                    },
                )
            })
            .collect();
        let outcomes = rt.store().apply(finish).await.map_err(serr("complete"))?;
        if !outcomes.iter().all(|o| o.applied()) {
            return Err(StudyError::runtime("E1 complete", "a guarded completion lost its race"));
        }
        handles
        // The crash: runtime and store dropped here, no shutdown.
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

fn clock_now(clock: &ManualClock) -> Timestamp {
    mcp_tasks_core::Clock::now(clock)
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
