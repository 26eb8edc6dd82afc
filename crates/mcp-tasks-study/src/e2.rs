//! E2 — the poll cost/staleness frontier (paper §6.2, Tables 2 and 3).
//!
//! One run polls a task of a given duration until a poll observes it done:
//! no poll at t = 0, the observing poll counts, staleness is how long after
//! completion that poll came. Fixed cells run once per phase; adaptive cells
//! run the shipped client's follow loop ([`Follow`], in the floor mode, over
//! the real `PollScheduler`) under a manual clock (CPython's generator, seeds
//! outer, phases inner, a fresh follow per run).

use mcp_tasks_core::{
    Clock, Follow, FollowConfig, FollowStep, ManualClock, PacingMode, PollPolicy, PyRandom, ServerHints, TaskStatus,
    Timestamp,
};
use serde::Serialize;

use crate::error::StudyError;
use crate::num::{short, whole_as_int};
use crate::progress::Progress;
use crate::stats::{mean, median};
use crate::table::{Table, fixed, percent};

/// The most polls one run may need before the parameters are refused as
/// unrunnable (the paper's largest cell needs 7 921).
pub const MAX_POLLS_PER_RUN: f64 = 10_000_000.0;

/// The most runs one cell may summarise (each run's staleness is kept for
/// the median); the paper's cells have 220.
pub const MAX_RUNS_PER_CELL: u64 = 10_000_000;

/// E2's parameters; the default is the paper's grid.
#[derive(Debug, Clone, PartialEq)]
pub struct E2Params {
    /// Nominal task durations D, seconds.
    pub durations_s: Vec<f64>,
    /// Fixed poll intervals, ms.
    pub fixed_ms: Vec<f64>,
    /// Adaptive policies' `max_ms` (initial 250 ms, ×1.6, half-range jitter).
    pub adaptive_max_ms: Vec<f64>,
    /// Seeds per adaptive cell: 0 .. seeds−1.
    pub seeds: u32,
    /// Phases per cell, spread over ±10 % of D.
    pub phases: u32,
}

impl Default for E2Params {
    fn default() -> Self {
        E2Params {
            durations_s: vec![60.0, 300.0, 1800.0],
            fixed_ms: vec![250.0, 1000.0, 5000.0],
            adaptive_max_ms: vec![10_000.0, 30_000.0, 60_000.0],
            seeds: 20,
            phases: 11,
        }
    }
}

impl E2Params {
    /// Refuses parameters the model is not defined on, naming the flag.
    pub fn validate(&self) -> Result<(), StudyError> {
        positive_list("durations", &self.durations_s, false)?;
        positive_list("fixed-ms", &self.fixed_ms, true)?;
        positive_list("adaptive-max-ms", &self.adaptive_max_ms, true)?;
        if self.fixed_ms.is_empty() && self.adaptive_max_ms.is_empty() {
            return Err(StudyError::param("fixed-ms", "give at least one fixed or adaptive policy"));
        }
        if self.seeds == 0 {
            return Err(StudyError::param("seeds", "must be at least 1"));
        }
        if self.phases == 0 {
            return Err(StudyError::param("phases", "must be at least 1"));
        }
        if u64::from(self.seeds) * u64::from(self.phases) > MAX_RUNS_PER_CELL {
            return Err(StudyError::param(
                "seeds",
                format!("{} seeds × {} phases exceeds {MAX_RUNS_PER_CELL} runs per cell", self.seeds, self.phases),
            ));
        }
        let longest = self.durations_s.iter().cloned().fold(0.0, f64::max) * 1.1;
        if let Some(step) = self.fixed_ms.iter().cloned().reduce(f64::min)
            && longest / (step / 1000.0) > MAX_POLLS_PER_RUN
        {
            return Err(StudyError::param(
                "fixed-ms",
                format!(
                    "{} ms against a {} s task would need more than {MAX_POLLS_PER_RUN} polls per run",
                    short(step),
                    short(longest)
                ),
            ));
        }
        if let Some(max) = self.adaptive_max_ms.iter().cloned().reduce(f64::min) {
            let smallest = max.min(PollPolicy::default().initial_ms) / 2.0;
            if longest / (smallest / 1000.0) > MAX_POLLS_PER_RUN {
                return Err(StudyError::param(
                    "adaptive-max-ms",
                    format!("{} ms would need more than {MAX_POLLS_PER_RUN} polls per run", short(max)),
                ));
            }
        }
        Ok(())
    }

    /// The phases, `0.90 + step·i` with `step` = 0.02 for the paper's 11
    /// (computed exactly as the model does); a single phase is 1.0.
    pub fn phase_values(&self) -> Vec<f64> {
        phases(self.phases)
    }

    /// How many runs the whole grid takes (for progress bars).
    pub fn total_runs(&self) -> u64 {
        let per_d = self.fixed_ms.len() as u64 * self.phases as u64
            + self.adaptive_max_ms.len() as u64 * self.seeds as u64 * self.phases as u64;
        per_d * self.durations_s.len() as u64
    }
}

pub(crate) fn positive_list(name: &'static str, v: &[f64], may_be_empty: bool) -> Result<(), StudyError> {
    if v.is_empty() && !may_be_empty {
        return Err(StudyError::param(name, "give at least one value"));
    }
    match v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        Some(bad) => Err(StudyError::param(name, format!("{bad} is not a positive number"))),
        None => Ok(()),
    }
}

/// `n` phases spread over ±10 %: `0.90 + (0.02 · 10/(n−1)) · i`, which is
/// exactly the model's `0.90 + 0.02·i` for n = 11.
pub fn phases(n: u32) -> Vec<f64> {
    if n <= 1 {
        return vec![1.0; n as usize];
    }
    let step = 0.02 * (10.0 / f64::from(n - 1));
    (0..n).map(|i| 0.90 + step * f64::from(i)).collect()
}

/// One client's polling policy in E2 (and E5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum PollCellPolicy {
    /// Poll every `interval_ms`.
    Fixed {
        /// The interval, ms.
        #[serde(serialize_with = "whole_as_int")]
        interval_ms: f64,
    },
    /// The shipped client in the floor mode with this `max_ms`, no server hint.
    Adaptive {
        /// The scheduler's ceiling, ms.
        #[serde(serialize_with = "whole_as_int")]
        max_ms: f64,
    },
    /// The same scheduler, given the server's duration-aware hint on every poll (E5).
    Hinted {
        /// The scheduler's ceiling, ms.
        #[serde(serialize_with = "whole_as_int")]
        max_ms: f64,
        /// The server's `pollIntervalMs` for this duration.
        #[serde(serialize_with = "whole_as_int")]
        hint_ms: f64,
    },
    /// The shipped client as it ships (E5): hint-paced, it lets the server
    /// set its regime — every delay drawn in `[h/2, h]` of the advertised
    /// hint — capped under half the advertised orphan window.
    HintPaced {
        /// The server's `pollIntervalMs` for this duration.
        #[serde(serialize_with = "whole_as_int")]
        hint_ms: f64,
        /// The orphan window the server advertised, ms.
        #[serde(serialize_with = "whole_as_int")]
        orphan_window_ms: f64,
    },
}

impl PollCellPolicy {
    /// The row label as the paper prints it ("fixed 250 ms", "adaptive, max 10 s").
    pub fn label(&self) -> String {
        match self {
            PollCellPolicy::Fixed { interval_ms } => format!("fixed {} ms", short(*interval_ms)),
            PollCellPolicy::Adaptive { max_ms } => format!("adaptive, max {} s", short(max_ms / 1000.0)),
            PollCellPolicy::Hinted { max_ms, .. } => format!("hint as floor, max {} s", short(max_ms / 1000.0)),
            PollCellPolicy::HintPaced { .. } => "hint-paced (server sets pace)".to_string(),
        }
    }
}

/// One cell: a duration and a policy, summarised over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E2Cell {
    /// Nominal duration D, seconds.
    #[serde(serialize_with = "whole_as_int")]
    pub duration_s: f64,
    /// The policy.
    #[serde(flatten)]
    pub policy: PollCellPolicy,
    /// Runs summarised.
    pub runs: usize,
    /// Mean polls per run.
    pub polls_mean: f64,
    /// Median staleness, seconds.
    pub stale_p50_s: f64,
    /// 95th percentile staleness (linear interpolation), seconds.
    pub stale_p95_s: f64,
    /// Median staleness over the nominal duration.
    pub stale_ratio: f64,
}

/// E2's result: every cell, durations outer, policies inner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E2Result {
    /// The cells.
    pub cells: Vec<E2Cell>,
    /// The parameters that produced them.
    #[serde(skip)]
    pub params: E2Params,
}

/// One run: polls until `elapsed ≥ duration`, each step from `next_step_s`.
/// Returns (polls, staleness). The fixed-interval cells, which model no
/// client of this project, run this directly.
pub fn run_once(duration_s: f64, mut next_step_s: impl FnMut() -> f64) -> (u64, f64) {
    let mut elapsed = 0.0f64;
    let mut polls = 0u64;
    loop {
        elapsed += next_step_s();
        polls += 1;
        if elapsed >= duration_s {
            return (polls, elapsed - duration_s);
        }
    }
}

/// One run of the shipped client's follow loop ([`Follow`], the state
/// machine `mcp-tasks-client` drives over HTTP) under a manual clock,
/// against a task that completes `duration_s` after it was created. The
/// server answers `working` with `hints` until a poll comes at or after the
/// completion; the machine decides every delay and when to stop. Returns
/// (polls, staleness), exactly as [`run_once`] counts them.
pub fn follow_once(duration_s: f64, follow: &mut Follow<PyRandom>, hints: ServerHints) -> (u64, f64) {
    let clock = ManualClock::new(Timestamp::from_secs(CLOCK_START_S));
    let mut elapsed = 0.0f64;
    let mut polls = 0u64;
    let mut step = follow.start(clock.now(), hints);
    loop {
        match step {
            FollowStep::Poll { at, delay_ms } => {
                // The exact delay keeps the model's arithmetic; the clock keeps the machine's.
                elapsed += delay_ms / 1000.0;
                polls += 1;
                clock.set(at);
                let status = if elapsed >= duration_s { TaskStatus::Completed } else { TaskStatus::Working };
                step = follow.on_answer(clock.now(), status, hints);
            }
            // The server never fails here, so the machine never gives up.
            FollowStep::Done { .. } | FollowStep::GiveUp(_) => return (polls, elapsed - duration_s),
        }
    }
}

/// Where the study's manual clocks start, seconds since the epoch.
pub const CLOCK_START_S: i64 = 1_000_000;

/// The paper's adaptive client: the shipped client's follow loop in the
/// floor mode with its own backoff ceiling `max_ms`.
pub fn adaptive_client(shipped: &FollowConfig, max_ms: f64) -> FollowConfig {
    FollowConfig { pacing: PacingMode::HintAsFloor, poll: PollPolicy { max_ms, ..shipped.poll.clone() }, ..shipped.clone() }
}

/// Who polls in one cell.
enum Poller {
    /// A fixed interval, ms (no client of this project).
    Fixed(f64),
    /// The shipped client's follow loop with this configuration, told these hints.
    Client(FollowConfig, ServerHints),
}

/// Who polls in the cell of `policy`, and what the server tells it.
fn poller(policy: PollCellPolicy, shipped: &FollowConfig) -> Poller {
    let hint = |ms: f64| Some(ms as u64);
    match policy {
        PollCellPolicy::Fixed { interval_ms } => Poller::Fixed(interval_ms),
        PollCellPolicy::Adaptive { max_ms } => Poller::Client(adaptive_client(shipped, max_ms), ServerHints::default()),
        PollCellPolicy::Hinted { max_ms, hint_ms } => Poller::Client(
            adaptive_client(shipped, max_ms),
            ServerHints { poll_interval_ms: hint(hint_ms), ..ServerHints::default() },
        ),
        PollCellPolicy::HintPaced { hint_ms, orphan_window_ms } => Poller::Client(
            shipped.clone(),
            ServerHints { poll_interval_ms: hint(hint_ms), orphan_window_ms: hint(orphan_window_ms), ttl_ms: None },
        ),
    }
}

/// The runs of a client, seeds outer and phases inner, a fresh follow per
/// run seeded like `random.Random(seed)`.
fn followed_runs(
    d: f64,
    phases: &[f64],
    seeds: u32,
    progress: &dyn Progress,
    config: &FollowConfig,
    hints: ServerHints,
) -> Vec<(u64, f64)> {
    let mut runs = Vec::new();
    for seed in 0..u64::from(seeds) {
        for phase in phases {
            let mut follow = Follow::new(config, PyRandom::new(seed));
            runs.push(follow_once(d * phase, &mut follow, hints));
        }
        progress.advance(phases.len() as u64);
    }
    runs
}

/// Runs one cell of `policy` at nominal duration `d`, with the shipped
/// client ([`FollowConfig::default`]).
pub fn run_cell(d: f64, policy: PollCellPolicy, params: &E2Params, progress: &dyn Progress) -> E2Cell {
    run_cell_with(d, policy, params, &FollowConfig::default(), progress)
}

/// Runs one cell of `policy` at nominal duration `d`, with `shipped` as the
/// client: the hint-paced cells run it as it is, the adaptive and hinted
/// cells in the floor mode with the cell's ceiling.
pub fn run_cell_with(
    d: f64,
    policy: PollCellPolicy,
    params: &E2Params,
    shipped: &FollowConfig,
    progress: &dyn Progress,
) -> E2Cell {
    let phases = params.phase_values();
    let runs = match poller(policy, shipped) {
        Poller::Client(config, hints) => followed_runs(d, &phases, params.seeds, progress, &config, hints),
        Poller::Fixed(interval_ms) => {
            let runs = phases.iter().map(|phase| run_once(d * phase, || interval_ms / 1000.0)).collect();
            progress.advance(phases.len() as u64);
            runs
        }
    };
    let polls: Vec<f64> = runs.iter().map(|(p, _)| *p as f64).collect();
    let stale: Vec<f64> = runs.iter().map(|(_, s)| *s).collect();
    let p50 = median(&stale);
    E2Cell {
        duration_s: d,
        policy,
        runs: polls.len(),
        polls_mean: mean(&polls),
        stale_p50_s: p50,
        stale_p95_s: quantile(&stale, 0.95),
        stale_ratio: p50 / d,
    }
}

/// The `q` quantile by linear interpolation between order statistics.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The paper's policies for `params`: fixed intervals, then adaptive ceilings.
pub fn policies(params: &E2Params) -> Vec<PollCellPolicy> {
    let fixed = params.fixed_ms.iter().map(|&interval_ms| PollCellPolicy::Fixed { interval_ms });
    let adaptive = params.adaptive_max_ms.iter().map(|&max_ms| PollCellPolicy::Adaptive { max_ms });
    fixed.chain(adaptive).collect()
}

/// Runs E2.
pub fn run(params: &E2Params, progress: &dyn Progress) -> Result<E2Result, StudyError> {
    params.validate()?;
    progress.stage("E2 poll frontier", params.total_runs());
    let mut cells = Vec::new();
    for &d in &params.durations_s {
        for policy in policies(params) {
            cells.push(run_cell(d, policy, params, progress));
        }
    }
    Ok(E2Result { cells, params: params.clone() })
}

impl E2Result {
    /// The cell for duration `d` and `policy`.
    pub fn cell(&self, d: f64, policy: PollCellPolicy) -> Option<&E2Cell> {
        self.cells.iter().find(|c| c.duration_s == d && c.policy == policy)
    }

    /// Table 2: polls and median staleness, by policy and duration.
    pub fn table2(&self) -> Table {
        let durations = &self.params.durations_s;
        let mut group: Vec<String> = vec![String::new()];
        let mut header: Vec<String> = vec!["policy".into()];
        for d in durations {
            group.push(format!("~{} s task", short(*d)));
            group.push(String::new());
            header.push("polls".into());
            header.push("stale p50".into());
        }
        let mut t = Table {
            title: "Table 2 — polls issued and staleness, by policy and task duration.".into(),
            header: vec![group, header],
            rows: Vec::new(),
            notes: Vec::new(),
        };
        for policy in policies(&self.params) {
            let mut row = vec![policy.label()];
            for &d in durations {
                let c = self.cell(d, policy).expect("every cell was run");
                row.push(fixed(c.polls_mean, 1));
                row.push(format!("{} s", fixed(c.stale_p50_s, 2)));
            }
            t.push(row);
        }
        t
    }

    /// Table 3: median staleness as a fraction of the duration, for the
    /// coarsest fixed interval and every adaptive ceiling (the paper's rows).
    pub fn table3(&self) -> Table {
        let durations = &self.params.durations_s;
        let mut header = vec!["policy".to_string()];
        header.extend(durations.iter().map(|d| format!("~{} s", short(*d))));
        let mut t = Table {
            title: "Table 3 — median staleness as a fraction of task duration.".into(),
            header: vec![header],
            rows: Vec::new(),
            notes: Vec::new(),
        };
        let coarsest = self.params.fixed_ms.iter().cloned().reduce(f64::max);
        let rows = coarsest
            .map(|interval_ms| PollCellPolicy::Fixed { interval_ms })
            .into_iter()
            .chain(self.params.adaptive_max_ms.iter().map(|&max_ms| PollCellPolicy::Adaptive { max_ms }));
        for policy in rows {
            let mut row = vec![policy.label()];
            for &d in durations {
                let c = self.cell(d, policy).expect("every cell was run");
                row.push(percent(c.stale_ratio, 1));
            }
            t.push(row);
        }
        t
    }
}
