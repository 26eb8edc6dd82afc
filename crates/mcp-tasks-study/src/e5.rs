//! E5 — beyond the paper: the two fixes §6.2 and §6.4 argue for, measured.
//!
//! (a) The E2 frontier when the server's `pollIntervalMs` follows the task's
//! expected duration (asked of the real runtime, whose hint is
//! [`HintPolicy::hint_for`] of the tool's declared duration) and
//! the client's real scheduler takes it as a floor on every poll, against
//! the paper's adaptive policies without it; and the shipped client as it
//! ships — hint-paced, it lets the server set its regime by adopting the
//! advertised hint as its pace, capped under the advertised orphan window.
//! Every client here is the core's [`Follow`](mcp_tasks_core::Follow) state
//! machine that `mcp-tasks-client` drives over HTTP, configured by
//! [`FollowConfig`].
//! (b) The E4 grid when the client caps its backoff under the orphan window
//! the server advertises (`PollScheduler::set_orphan_window_ms`): every cell
//! must survive.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{FollowConfig, HintPolicy, ManualClock, Policy, Timestamp};
use mcp_tasks_runtime::{CreateTask, Runtime};
use mcp_tasks_store::MemoryStore;
use serde::Serialize;

use crate::e2::{E2Cell, E2Params, PollCellPolicy, run_cell_with};
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

/// The `pollIntervalMs` and orphan window a real server advertises for a
/// task of a tool that declares `duration_s`: asked of the project's runtime
/// (in-memory store, manual clock), so the numbers are the ones a client
/// would receive.
pub async fn advertised(policy: &HintPolicy, duration_s: f64) -> Result<AdvertisedHint, StudyError> {
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
    Ok(AdvertisedHint { duration_s, hint_ms: view.poll_interval_ms as f64, orphan_window_ms: view.orphan_window_ms as f64 })
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
    /// The orphan window the server advertised with it, ms.
    #[serde(serialize_with = "crate::num::whole_as_int")]
    pub orphan_window_ms: f64,
}

/// E5's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E5Result {
    /// (a) The adaptive cells without and with the server's hint (durations
    /// outer, client ceilings inner, the paper's policy first), then each
    /// duration's hint-paced cell.
    pub frontier: Vec<E2Cell>,
    /// (b) The E4 grid with clients that honour the orphan window.
    pub grid: E4Result,
    /// Whether every cell of (b) survived.
    pub all_survived: bool,
    /// The `pollIntervalMs` the server advertised for each duration.
    pub hints: Vec<AdvertisedHint>,
    /// The server's hint policy used in (a).
    pub hint_policy: HintPolicy,
    /// How to read (a), in two sentences (Table 6a's footnote).
    pub reading: String,
    /// The E2 parameters used in (a).
    #[serde(skip)]
    pub e2: E2Params,
}

/// Runs E5 with the server's default hint policy and the shipped client
/// ([`FollowConfig::default`], what `mcp-tasks-client` and `mcp-tasks call`
/// follow tasks with).
pub async fn run(e2: &E2Params, e4: &E4Params, progress: &dyn Progress) -> Result<E5Result, StudyError> {
    run_with_client(e2, e4, &FollowConfig::default(), progress).await
}

/// Runs E5 with `client` as the shipped client: its hint-paced row is
/// `client` as configured, its adaptive rows `client` in the floor mode.
pub async fn run_with_client(
    e2: &E2Params,
    e4: &E4Params,
    client: &FollowConfig,
    progress: &dyn Progress,
) -> Result<E5Result, StudyError> {
    e2.validate()?;
    if e2.adaptive_max_ms.is_empty() {
        return Err(StudyError::param("adaptive-max-ms", "E5 compares adaptive clients: give at least one ceiling"));
    }
    let hint_policy = HintPolicy::default();
    let cells_per_duration = 2 * e2.adaptive_max_ms.len() as u64 + 1;
    let runs = cells_per_duration * e2.durations_s.len() as u64 * u64::from(e2.seeds) * u64::from(e2.phases);
    progress.stage("E5 duration-aware hint", runs);
    let mut frontier = Vec::new();
    let mut hints = Vec::new();
    for &d in &e2.durations_s {
        let advertised = advertised(&hint_policy, d).await?;
        hints.push(advertised);
        let hint_ms = advertised.hint_ms;
        for &max_ms in &e2.adaptive_max_ms {
            frontier.push(run_cell_with(d, PollCellPolicy::Adaptive { max_ms }, e2, client, progress));
            frontier.push(run_cell_with(d, PollCellPolicy::Hinted { max_ms, hint_ms }, e2, client, progress));
        }
        let paced = PollCellPolicy::HintPaced { hint_ms, orphan_window_ms: advertised.orphan_window_ms };
        frontier.push(run_cell_with(d, paced, e2, client, progress));
    }
    let grid = run_grid(e4, true, progress).await?;
    let all_survived = grid.cells.iter().all(|c| !c.orphaned);
    let mut result = E5Result { frontier, grid, all_survived, hints, hint_policy, reading: String::new(), e2: e2.clone() };
    result.reading = result.read_frontier();
    Ok(result)
}

/// How far apart the largest and smallest of `v` are, as a factor (1 for
/// none or one value; infinite when the smallest is never stale).
fn spread(v: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = v.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if hi == 0.0 { 1.0 } else { hi / lo }
}

/// A spread as the footnote prints it ("28×").
fn show_spread(factor: f64) -> String {
    if factor.is_finite() { format!("{}×", fixed(factor, 0)) } else { "without bound".to_string() }
}

/// The smallest and largest of `v`, printed by `show` ("0.7%–0.8%").
fn range(v: impl Iterator<Item = f64>, show: impl Fn(f64) -> String) -> String {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if show(lo) == show(hi) { show(lo) } else { format!("{}–{}", show(lo), show(hi)) }
}

impl E5Result {
    /// The hint advertised for duration `d`.
    pub fn hint_for(&self, d: f64) -> f64 {
        self.hints.iter().find(|h| h.duration_s == d).map_or(f64::NAN, |h| h.hint_ms)
    }

    fn cell(&self, d: f64, policy: PollCellPolicy) -> &E2Cell {
        self.frontier.iter().find(|c| c.duration_s == d && c.policy == policy).expect("every cell was run")
    }

    /// The hint-paced cell of duration `d`.
    pub fn hint_paced(&self, d: f64) -> Option<&E2Cell> {
        self.frontier.iter().find(|c| c.duration_s == d && matches!(c.policy, PollCellPolicy::HintPaced { .. }))
    }

    /// The largest spread, over the client ceilings, of relative staleness
    /// across durations, for the adaptive clients with or without the hint.
    fn widest_spread(&self, hinted: bool) -> f64 {
        self.e2
            .adaptive_max_ms
            .iter()
            .map(|&max_ms| {
                spread(self.frontier.iter().filter_map(|c| match c.policy {
                    PollCellPolicy::Adaptive { max_ms: m } if !hinted && m == max_ms => Some(c.stale_ratio),
                    PollCellPolicy::Hinted { max_ms: m, .. } if hinted && m == max_ms => Some(c.stale_ratio),
                    _ => None,
                }))
            })
            .fold(1.0, f64::max)
    }

    /// Two sentences that say what (a) shows, from its numbers.
    fn read_frontier(&self) -> String {
        let paced: Vec<&E2Cell> = self.e2.durations_s.iter().filter_map(|&d| self.hint_paced(d)).collect();
        format!(
            "Reading: a client that adopts the server's hint (here {} of the expected duration) as its pace \
             polls {} times and is stale by {} of the task at every duration, where the paper's adaptive \
             clients' relative staleness varies up to {} across durations. Taking the hint only as a floor \
             leaves that spread at up to {}, because the client's own ceiling, not the server, still sets \
             how stale it gets.",
            percent(self.hint_policy.fraction, 0),
            range(paced.iter().map(|c| c.polls_mean), |x| fixed(x, 1)),
            range(paced.iter().map(|c| c.stale_ratio), |x| percent(x, 1)),
            show_spread(self.widest_spread(false)),
            show_spread(self.widest_spread(true)),
        )
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
            notes: vec![self.reading.clone()],
        };
        let durations = &self.e2.durations_s;
        let mut push = |label: String, cells: Vec<&E2Cell>| {
            let mut row = vec![label];
            for c in cells {
                row.extend([fixed(c.polls_mean, 1), format!("{} s", fixed(c.stale_p50_s, 2)), percent(c.stale_ratio, 1)]);
            }
            t.push(row);
        };
        for &max_ms in &self.e2.adaptive_max_ms {
            let plain = PollCellPolicy::Adaptive { max_ms };
            push(plain.label(), durations.iter().map(|&d| self.cell(d, plain)).collect());
            let hinted = |d| PollCellPolicy::Hinted { max_ms, hint_ms: self.hint_for(d) };
            push(hinted(0.0).label(), durations.iter().map(|&d| self.cell(d, hinted(d))).collect());
        }
        let paced: Vec<&E2Cell> = durations.iter().filter_map(|&d| self.hint_paced(d)).collect();
        if let Some(first) = paced.first() {
            push(first.policy.label(), paced);
        }
        t
    }

    /// Table 6b: the E4 grid with clients that cap their backoff under the
    /// advertised orphan window.
    pub fn table6b(&self) -> Table {
        self.grid.grid_table("Table 6b — task outcome when the client caps its backoff under the advertised orphan window.")
    }
}
