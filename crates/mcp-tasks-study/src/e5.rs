//! E5 — beyond the paper: the two fixes §6.2 and §6.4 argue for, measured.
//!
//! (a) The E2 frontier when the server's `pollIntervalMs` follows the task's
//! expected duration (asked of the real runtime, whose hint is
//! [`HintPolicy::hint_for`] of the tool's declared duration) and
//! the client's real scheduler takes it as a floor on every poll, against
//! the paper's adaptive policies without it.
//! (b) The E4 grid when the client caps its backoff under the orphan window
//! the server advertises (`PollScheduler::set_orphan_window_ms`): every cell
//! must survive.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{HintPolicy, ManualClock, Policy, Timestamp};
use mcp_tasks_runtime::{CreateTask, Runtime};
use mcp_tasks_store::MemoryStore;
use serde::Serialize;

use crate::e2::{E2Cell, E2Params, PollCellPolicy, run_cell};
use crate::e4::{E4Params, E4Result, run_grid};
use crate::error::StudyError;
use crate::num::short;
use crate::progress::Progress;
use crate::table::{Table, fixed, percent};
use crate::tool::{LongRunningReport, TOOL_NAME};

/// The hint the server's policy gives a task expected to take `duration_s`,
/// in whole ms as on the wire.
pub fn hint_ms(policy: &HintPolicy, duration_s: f64) -> f64 {
    policy.hint_for(Some(Duration::from_secs_f64(duration_s))).as_millis() as f64
}

/// The `pollIntervalMs` a real server advertises for a task of a tool that
/// declares `duration_s`: asked of the project's runtime (in-memory store,
/// manual clock), so the number is the one a client would receive.
pub async fn advertised_hint_ms(policy: &HintPolicy, duration_s: f64) -> Result<f64, StudyError> {
    let clock = ManualClock::new(Timestamp::from_secs(crate::e4::CLOCK_START_S));
    let server = Runtime::builder(Arc::new(MemoryStore::new()))
        .policy(Policy { poll_hint: policy.clone(), ..Policy::default() })
        .clock(Arc::new(clock))
        .tool(Arc::new(LongRunningReport::new(Some(Duration::from_secs_f64(duration_s)))))
        .build()
        .map_err(|e| StudyError::runtime("E5 server", e))?;
    let view = server
        .create_task(CreateTask::new(TOOL_NAME, serde_json::json!({ "seconds": duration_s as u64 })))
        .await
        .map_err(|e| StudyError::runtime("E5 create", e))?;
    Ok(view.poll_interval_ms as f64)
}

/// The hint the server advertised for one duration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AdvertisedHint {
    /// The tool's declared duration, seconds.
    #[serde(serialize_with = "crate::num::whole_as_int")]
    pub duration_s: f64,
    /// `pollIntervalMs` on the wire.
    #[serde(serialize_with = "crate::num::whole_as_int")]
    pub hint_ms: f64,
}

/// E5's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E5Result {
    /// (a) The adaptive cells without and with the server's hint, durations
    /// outer, client ceilings inner, the paper's policy first.
    pub frontier: Vec<E2Cell>,
    /// (b) The E4 grid with clients that honour the orphan window.
    pub grid: E4Result,
    /// Whether every cell of (b) survived.
    pub all_survived: bool,
    /// The `pollIntervalMs` the server advertised for each duration.
    pub hints: Vec<AdvertisedHint>,
    /// The server's hint policy used in (a).
    pub hint_policy: HintPolicy,
    /// The E2 parameters used in (a).
    #[serde(skip)]
    pub e2: E2Params,
}

/// Runs E5 with the server's default hint policy.
pub async fn run(e2: &E2Params, e4: &E4Params, progress: &dyn Progress) -> Result<E5Result, StudyError> {
    e2.validate()?;
    if e2.adaptive_max_ms.is_empty() {
        return Err(StudyError::param("adaptive-max-ms", "E5 compares adaptive clients: give at least one ceiling"));
    }
    let hint_policy = HintPolicy::default();
    let runs = 2 * e2.durations_s.len() as u64 * e2.adaptive_max_ms.len() as u64 * u64::from(e2.seeds) * u64::from(e2.phases);
    progress.stage("E5 duration-aware hint", runs);
    let mut frontier = Vec::new();
    let mut hints = Vec::new();
    for &d in &e2.durations_s {
        let hint = advertised_hint_ms(&hint_policy, d).await?;
        hints.push(AdvertisedHint { duration_s: d, hint_ms: hint });
        for &max_ms in &e2.adaptive_max_ms {
            frontier.push(run_cell(d, PollCellPolicy::Adaptive { max_ms }, e2, progress));
            frontier.push(run_cell(d, PollCellPolicy::Hinted { max_ms, hint_ms: hint }, e2, progress));
        }
    }
    let grid = run_grid(e4, true, progress).await?;
    let all_survived = grid.cells.iter().all(|c| !c.orphaned);
    Ok(E5Result { frontier, grid, all_survived, hints, hint_policy, e2: e2.clone() })
}

impl E5Result {
    /// The hint advertised for duration `d`.
    pub fn hint_for(&self, d: f64) -> f64 {
        self.hints.iter().find(|h| h.duration_s == d).map_or(f64::NAN, |h| h.hint_ms)
    }

    fn cell(&self, d: f64, policy: PollCellPolicy) -> &E2Cell {
        self.frontier.iter().find(|c| c.duration_s == d && c.policy == policy).expect("every cell was run")
    }

    /// Table 6a: polls, median staleness and relative staleness, with and
    /// without the server's duration-aware hint.
    pub fn table6a(&self) -> Table {
        let mut group = vec![String::new()];
        let mut header = vec!["client".to_string()];
        for &d in &self.e2.durations_s {
            group.push(format!("~{} s task, hint {} s", short(d), short(self.hint_for(d) / 1000.0)));
            group.extend([String::new(), String::new()]);
            header.extend(["polls".into(), "stale p50".into(), "of task".into()]);
        }
        let mut t = Table {
            title: "Table 6a — the E2 frontier when the server's pollIntervalMs follows the expected duration.".into(),
            header: vec![group, header],
            rows: Vec::new(),
        };
        for &max_ms in &self.e2.adaptive_max_ms {
            for hinted in [false, true] {
                let mut row = Vec::new();
                for &d in &self.e2.durations_s {
                    let policy = if hinted {
                        PollCellPolicy::Hinted { max_ms, hint_ms: self.hint_for(d) }
                    } else {
                        PollCellPolicy::Adaptive { max_ms }
                    };
                    let c = self.cell(d, policy);
                    if row.is_empty() {
                        row.push(policy.label());
                    }
                    row.push(fixed(c.polls_mean, 1));
                    row.push(format!("{} s", fixed(c.stale_p50_s, 2)));
                    row.push(percent(c.stale_ratio, 1));
                }
                t.push(row);
            }
        }
        t
    }

    /// Table 6b: the E4 grid with clients that cap their backoff under the
    /// advertised orphan window.
    pub fn table6b(&self) -> Table {
        self.grid.grid_table("Table 6b — task outcome when the client caps its backoff under the advertised orphan window.")
    }
}
