//! E4 — backoff against the orphan window (paper §6.4, Table 5).
//!
//! One task that never completes, on the project's real [`Runtime`] over an
//! in-memory store and a manual clock. The client is the shipped client's
//! follow loop ([`Follow`], in the floor mode with the cell's backoff
//! ceiling, seed 7) and polls through `get_task`, which records the poll;
//! it reads neither the hint nor (unless it honours it) the orphan window,
//! as in the paper. The real reaper
//! (`reap_once`: flush polls, timeouts, orphans, expiry) runs every sweep.
//! The task is orphaned exactly when a poll gap reaches the window.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{
    Clock, Follow, FollowConfig, FollowStep, ManualClock, Policy, PyRandom, ServerHints, TaskStatus, Timestamp,
};
use mcp_tasks_runtime::{CreateTask, Runtime};
use mcp_tasks_store::MemoryStore;
use serde::Serialize;

use crate::e2::adaptive_client;
use crate::error::StudyError;
use crate::num::{short, whole_as_int};
use crate::progress::Progress;
use crate::table::Table;
use crate::tool::{LongRunningReport, TOOL_NAME};

/// Where the manual clock starts, seconds since the epoch.
pub const CLOCK_START_S: i64 = 1_000_000;

/// E4's parameters; the default is the paper's grid.
#[derive(Debug, Clone, PartialEq)]
pub struct E4Params {
    /// Client backoff ceilings (`max_ms`), ms.
    pub max_backoff_ms: Vec<f64>,
    /// Server orphan windows, seconds.
    pub orphan_window_s: Vec<f64>,
    /// How long the client keeps waiting (the task never completes), seconds.
    pub task_duration_s: f64,
    /// Reaper period and client tick, seconds.
    pub sweep_interval_s: f64,
    /// The client scheduler's seed.
    pub seed: u64,
}

impl Default for E4Params {
    fn default() -> Self {
        E4Params {
            max_backoff_ms: vec![10_000.0, 60_000.0, 300_000.0, 900_000.0],
            orphan_window_s: vec![900.0, 120.0],
            task_duration_s: 3600.0,
            sweep_interval_s: 30.0,
            seed: 7,
        }
    }
}

fn whole_ms(name: &'static str, v: &[f64]) -> Result<(), StudyError> {
    crate::e2::positive_list(name, v, false)?;
    match v.iter().find(|x| (**x * 1000.0).fract() != 0.0 || **x > 1.0e9) {
        Some(bad) => Err(StudyError::param(name, format!("{bad} s is not a whole number of milliseconds below 10^9 s"))),
        None => Ok(()),
    }
}

impl E4Params {
    /// Refuses parameters the model is not defined on, naming the flag.
    pub fn validate(&self) -> Result<(), StudyError> {
        crate::e2::positive_list("max-backoff-ms", &self.max_backoff_ms, false)?;
        whole_ms("orphan-window-s", &self.orphan_window_s)?;
        whole_ms("task-duration-s", &[self.task_duration_s])?;
        whole_ms("sweep-interval-s", &[self.sweep_interval_s])?;
        if self.task_duration_s / self.sweep_interval_s > 1.0e6 {
            return Err(StudyError::param("sweep-interval-s", "more than a million sweeps per run"));
        }
        Ok(())
    }

    /// The task's execution deadline: twice the client's wait (the paper's
    /// 7200 s for its one-hour task), so the timeout sweep never ends it first.
    pub fn max_execution_s(&self) -> f64 {
        2.0 * self.task_duration_s
    }
}

/// One cell of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E4Cell {
    /// The client's backoff ceiling, ms.
    #[serde(serialize_with = "whole_as_int")]
    pub max_backoff_ms: f64,
    /// The server's orphan window, seconds.
    #[serde(serialize_with = "whole_as_int")]
    pub orphan_window_s: f64,
    /// Whether the client capped its backoff under the advertised window (E5).
    pub honours_orphan_window: bool,
    /// Whether the reaper cancelled the live task as an orphan.
    pub orphaned: bool,
    /// When (seconds after creation), if it was.
    pub cancelled_at_s: Option<f64>,
    /// Polls the client made.
    pub polls: u32,
    /// The longest gap between polls the client chose, seconds: between
    /// polls it made, and, when orphaned, up to the sweep at which it would
    /// have made its next one. The task is orphaned exactly when this
    /// exceeds the window (a poll in the sweep that reaches it still counts).
    #[serde(serialize_with = "whole_as_int")]
    pub longest_gap_s: f64,
}

/// The server policy of one cell: the orphan window W, a deadline beyond the
/// run, and the sweep interval, with the periods and hint bounds brought
/// within what `Policy::validate` accepts for W by the policy's own rules
/// ([`Policy::fitted_to_windows`]). The study drives the reaper itself, so
/// the periods are declarations, not timers. Every poll is written (no poll
/// slack), so the reaper cancels at exactly W of silence, as the paper's does.
pub fn cell_policy(window_s: f64, params: &E4Params) -> Policy {
    let mut policy = Policy::default();
    policy.retention.orphan_after = Duration::from_secs_f64(window_s);
    policy.retention.poll_slack_share = 0.0;
    policy.retention.max_execution = Duration::from_secs_f64(params.max_execution_s());
    policy.reaper_interval = Duration::from_secs_f64(params.sweep_interval_s);
    policy.fitted_to_windows()
}

/// Runs one cell: ceiling `max_ms`, window `window_s`; with `honour` the
/// client caps its backoff under the orphan window the server advertises.
pub async fn run_cell(max_ms: f64, window_s: f64, honour: bool, params: &E4Params) -> Result<E4Cell, StudyError> {
    let clock = ManualClock::new(Timestamp::from_secs(CLOCK_START_S));
    let runtime = Runtime::builder(Arc::new(MemoryStore::new()))
        .policy(cell_policy(window_s, params))
        .clock(Arc::new(clock.clone()))
        .tool(Arc::new(LongRunningReport::default()))
        .build()
        .map_err(|e| StudyError::runtime(format!("E4 runtime for an orphan window of {} s", short(window_s)), e))?;
    let err = |what: &str| {
        let what = what.to_owned();
        move |e| StudyError::runtime(format!("E4 {what}"), e)
    };
    // The executor never runs here, so the task stays `working` for the whole run.
    let seconds = params.max_execution_s() as u64;
    let created = runtime
        .create_task(CreateTask::new(TOOL_NAME, serde_json::json!({ "seconds": seconds })))
        .await
        .map_err(err("create"))?;
    let id = created.record.id.clone();

    let mut client = Follow::new(&adaptive_client(&FollowConfig::default(), max_ms), PyRandom::new(params.seed));
    // What this client takes from the server's answers: at most the orphan window.
    let known = ServerHints { orphan_window_ms: honour.then_some(created.orphan_window_ms), ..ServerHints::default() };
    let delay_s = |step: FollowStep| match step {
        FollowStep::Poll { delay_ms, .. } => Ok(delay_ms / 1000.0),
        FollowStep::Done { status } => {
            Err(StudyError::runtime("E4 client", format!("the never-ending task ended {status}")))
        }
        FollowStep::GiveUp(_) => Err(StudyError::runtime("E4 client", "gave up on a server that always answered")),
    };
    let sweep = Duration::from_secs_f64(params.sweep_interval_s);
    let mut next_poll_at = delay_s(client.start(clock.now(), known))?;
    let (mut elapsed, mut last_seen, mut longest_gap, mut polls) = (0.0f64, 0.0f64, 0.0f64, 0u32);
    while elapsed < params.task_duration_s {
        clock.advance(sweep);
        elapsed += params.sweep_interval_s;
        if elapsed >= next_poll_at {
            let view = runtime.get_task(&id, None).await.map_err(err("poll"))?;
            polls += 1;
            longest_gap = longest_gap.max(elapsed - last_seen);
            last_seen = elapsed;
            next_poll_at = elapsed + delay_s(client.on_answer(clock.now(), view.record.status, known))?;
        }
        runtime.reap_once().await.map_err(err("reaper pass"))?;
        // Read the row directly: a get_task here would count as a poll.
        let row = runtime.store().get(&id).await.map_err(|e| StudyError::runtime("E4 read", e))?;
        if row.is_some_and(|r| r.status == TaskStatus::Cancelled) {
            let next_sweep = (next_poll_at / params.sweep_interval_s).ceil() * params.sweep_interval_s;
            longest_gap = longest_gap.max(next_sweep - last_seen);
            return Ok(E4Cell {
                max_backoff_ms: max_ms,
                orphan_window_s: window_s,
                honours_orphan_window: honour,
                orphaned: true,
                cancelled_at_s: Some(elapsed),
                polls,
                longest_gap_s: longest_gap,
            });
        }
    }
    Ok(E4Cell {
        max_backoff_ms: max_ms,
        orphan_window_s: window_s,
        honours_orphan_window: honour,
        orphaned: false,
        cancelled_at_s: None,
        polls,
        longest_gap_s: longest_gap,
    })
}

/// E4's (or E5b's) result: ceilings outer, windows inner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E4Result {
    /// The cells.
    pub cells: Vec<E4Cell>,
    /// The parameters that produced them.
    #[serde(skip)]
    pub params: E4Params,
}

/// Runs the grid; with `honour` every client caps its backoff under the window.
pub async fn run_grid(params: &E4Params, honour: bool, progress: &dyn Progress) -> Result<E4Result, StudyError> {
    params.validate()?;
    let label = if honour { "E5 honoured orphan window" } else { "E4 orphan window" };
    progress.stage(label, (params.max_backoff_ms.len() * params.orphan_window_s.len()) as u64);
    let mut cells = Vec::new();
    for &m in &params.max_backoff_ms {
        for &w in &params.orphan_window_s {
            cells.push(run_cell(m, w, honour, params).await?);
            progress.advance(1);
        }
    }
    Ok(E4Result { cells, params: params.clone() })
}

/// Runs E4 as the paper does: clients that do not know the window.
pub async fn run(params: &E4Params, progress: &dyn Progress) -> Result<E4Result, StudyError> {
    run_grid(params, false, progress).await
}

impl E4Cell {
    /// "survived" or "orphaned at 780 s".
    pub fn outcome(&self) -> String {
        match self.cancelled_at_s {
            Some(t) => format!("orphaned at {} s", short(t)),
            None => "survived".into(),
        }
    }
}

impl E4Result {
    /// The cell for ceiling `m` and window `w`.
    pub fn cell(&self, m: f64, w: f64) -> Option<&E4Cell> {
        self.cells.iter().find(|c| c.max_backoff_ms == m && c.orphan_window_s == w)
    }

    /// The grid as the paper lays out Table 5, under `title`.
    pub fn grid_table(&self, title: &str) -> Table {
        let mut header = vec!["client max backoff".to_string()];
        header.extend(self.params.orphan_window_s.iter().map(|w| format!("orphan window {} s", short(*w))));
        let mut t = Table { title: title.into(), header: vec![header], rows: Vec::new(), notes: Vec::new() };
        for &m in &self.params.max_backoff_ms {
            let mut row = vec![format!("{} s", short(m / 1000.0))];
            for &w in &self.params.orphan_window_s {
                row.push(self.cell(m, w).expect("every cell was run").outcome());
            }
            t.push(row);
        }
        t
    }

    /// Table 5.
    pub fn table5(&self) -> Table {
        self.grid_table("Table 5 — task outcome by client backoff ceiling and server orphan window.")
    }
}
