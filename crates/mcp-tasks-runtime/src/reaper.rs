//! The reaper service (paper §5.1): one pass runs timeouts, then orphans,
//! then expiry. Each sweep reads candidates in batches, asks
//! [`mcp_tasks_core::reaper::decide`] about each, and applies the decisions
//! as one guarded write per batch, guarded on the version it read (orphans
//! also on "no poll since the cutoff"), so a task that changed meanwhile is
//! left alone. [`Reaper`] holds only what the pass uses; its loop is
//! [`Reaper::spawn`].

use std::sync::Arc;
use std::time::Instant;

use mcp_tasks_core::reaper::{self, ReaperAction, SWEEP_ORDER};
use mcp_tasks_core::{Clock, RetentionPolicy, Sweep, SweepContext, TaskRecord, Timestamp};
use mcp_tasks_store::{Guard, GuardedUpdate, PollBuffer, SweepQuery, TaskStore, UpdateOutcome};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;
use crate::maintenance::{self, Schedule};
use crate::metrics::{Metrics, Outcome};
use crate::running::{Running, StopReason};
use crate::transitions;

/// Candidates read per batch.
pub const SWEEP_BATCH: usize = 256;

/// Upper bound on batches per sweep per pass, so one pass always ends.
pub const MAX_BATCHES_PER_SWEEP: usize = 64;

/// What one reaper pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReapReport {
    /// Live tasks failed as past their deadline.
    pub timed_out: usize,
    /// Live tasks cancelled as unpolled for the orphan window.
    pub orphaned: usize,
    /// Terminal tasks deleted after retention.
    pub expired: usize,
}

/// One task the next reaper pass would act on ([`Runtime::reap_plan`](crate::Runtime::reap_plan)).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedReap {
    /// The sweep that would act.
    pub sweep: Sweep,
    /// The task as read.
    pub task: TaskRecord,
    /// What the core decided for it.
    pub action: ReaperAction,
}

/// The reaper's settings.
#[derive(Debug, Clone)]
pub(crate) struct ReaperConfig {
    /// The windows it enforces.
    pub(crate) retention: RetentionPolicy,
    /// When this runtime was built: silence is measured from no earlier.
    pub(crate) silence_floor: Timestamp,
    /// When its loop runs (every `reaper_interval`; a fleet gates it on leadership).
    pub(crate) schedule: Schedule,
}

/// The reaper pass and what it uses.
pub(crate) struct Reaper {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) clock: Arc<dyn Clock>,
    /// Flushed first, so polls noted before a pass count in it.
    pub(crate) polls: Arc<PollBuffer>,
    /// Handlers here of a task the reaper ended are told to stop.
    pub(crate) running: Arc<Running>,
    /// Where sweeps and what they did are counted.
    pub(crate) metrics: Metrics,
    pub(crate) config: ReaperConfig,
}

impl Reaper {
    /// Runs [`reap_once`](Self::reap_once) on the reaper's schedule until `stop`.
    pub(crate) fn spawn(self: &Arc<Self>, stop: CancellationToken) -> JoinHandle<()> {
        let reaper = self.clone();
        maintenance::spawn_pass("reaper", self.config.schedule.clone(), stop, move || {
            let reaper = reaper.clone();
            async move { reaper.reap_once().await.map(|_| ()) }
        })
    }

    /// One pass: flush buffered polls, then each sweep in order.
    pub(crate) async fn reap_once(&self) -> Result<ReapReport, RuntimeError> {
        // Polls noted before this pass must count, or a polled task could be reaped.
        self.polls.flush(self.store.as_ref()).await?;
        let mut report = ReapReport::default();
        for sweep in SWEEP_ORDER {
            let started = Instant::now();
            let n = self.run_sweep(sweep).await?;
            self.metrics.sweep(sweep_label(sweep), n, started.elapsed());
            match sweep {
                Sweep::Timeouts => report.timed_out = n,
                Sweep::Orphans => report.orphaned = n,
                Sweep::Expiry => report.expired = n,
            }
        }
        self.metrics.reaper_pass();
        if report != ReapReport::default() {
            tracing::info!(
                timed_out = report.timed_out,
                orphaned = report.orphaned,
                expired = report.expired,
                "reaper pass: {} timed out, {} orphaned, {} expired",
                report.timed_out,
                report.orphaned,
                report.expired
            );
        }
        Ok(report)
    }

    /// One line and the counters for a task a sweep acted on.
    fn count_and_log(&self, sweep: Sweep, record: &TaskRecord) {
        let (task, tool) = (&record.id, &record.tool);
        match sweep {
            Sweep::Timeouts => {
                tracing::info!(task = %task, tool = %tool, attempt = record.attempt, "timed out: failed past its deadline");
                self.metrics.finished(tool, Outcome::TimedOut);
            }
            Sweep::Orphans => {
                tracing::info!(
                    task = %task,
                    tool = %tool,
                    attempt = record.attempt,
                    "orphan cancelled: no client polled it for the orphan window"
                );
                self.metrics.finished(tool, Outcome::Orphaned);
                self.metrics.orphan_cancelled(tool);
            }
            Sweep::Expiry => {
                tracing::debug!(task = %task, tool = %tool, status = %record.status, "expired: deleted after retention");
            }
        }
    }

    /// What [`reap_once`](Self::reap_once) would do now, writing nothing:
    /// the candidates of each sweep (as many as a pass reaches), the core's
    /// decision for each, a task counted by the first sweep that acts on it.
    pub(crate) async fn plan_once(&self) -> Result<Vec<PlannedReap>, RuntimeError> {
        let now = self.clock.now();
        let ctx = SweepContext { now, retention: &self.config.retention, silence_floor: self.config.silence_floor };
        let mut plan: Vec<PlannedReap> = Vec::new();
        for sweep in SWEEP_ORDER {
            let Some(query) = sweep_query(sweep, &ctx, SWEEP_BATCH * MAX_BATCHES_PER_SWEEP) else { continue };
            for task in self.store.sweep_candidates(query).await? {
                if plan.iter().any(|p| p.task.id == task.id) {
                    continue;
                }
                if let Some(action) = reaper::decide(sweep, &task, &ctx) {
                    plan.push(PlannedReap { sweep, task, action });
                }
            }
        }
        Ok(plan)
    }

    async fn run_sweep(&self, sweep: Sweep) -> Result<usize, RuntimeError> {
        let now = self.clock.now();
        let retention = &self.config.retention;
        let ctx = SweepContext { now, retention, silence_floor: self.config.silence_floor };
        // No query: this instance has not watched long enough to call anything abandoned.
        let Some(query) = sweep_query(sweep, &ctx, SWEEP_BATCH) else { return Ok(0) };
        let mut done = 0;
        for _ in 0..MAX_BATCHES_PER_SWEEP {
            let candidates = self.store.sweep_candidates(query.clone()).await?;
            let full = candidates.len() >= SWEEP_BATCH;
            let updates: Vec<(TaskRecord, GuardedUpdate)> = candidates
                .into_iter()
                .filter_map(|record| {
                    let action = reaper::decide(sweep, &record, &ctx)?;
                    let guard = Guard {
                        last_seen_at_or_before: ctx.orphan_cutoff().filter(|_| sweep == Sweep::Orphans),
                        ..Guard::read(&record)
                    };
                    let update =
                        GuardedUpdate { guard, update: transitions::reaper_update(action, &record, now, retention) };
                    Some((record, update))
                })
                .collect();
            if updates.is_empty() {
                break;
            }
            let (records, updates): (Vec<_>, Vec<_>) = updates.into_iter().unzip();
            let outcomes = self.store.apply(updates).await?;
            let mut applied = 0;
            for (record, outcome) in records.iter().zip(&outcomes) {
                match outcome {
                    UpdateOutcome::Applied(_) => {
                        applied += 1;
                        self.count_and_log(sweep, record);
                        // A local handler of a timed-out or orphaned task must stop;
                        // its own write would lose the guard anyway.
                        self.running.stop(&record.id, StopReason::LeaseLost);
                    }
                    _ => tracing::debug!(task = %record.id, "sweep skipped a task that changed since it was read"),
                }
            }
            done += applied;
            // Stop on a short batch, or when nothing applied (the same rows would come back).
            if !full || applied == 0 {
                break;
            }
        }
        Ok(done)
    }
}

/// The candidate query of `sweep` at `ctx`, or `None` when the sweep has
/// nothing to look for (orphans before a full window since the silence floor).
fn sweep_query(sweep: Sweep, ctx: &SweepContext<'_>, limit: usize) -> Option<SweepQuery> {
    let now = ctx.now;
    Some(match sweep {
        Sweep::Timeouts => SweepQuery::PastDeadline { now, limit },
        Sweep::Orphans => SweepQuery::Unseen { cutoff: ctx.orphan_cutoff()?, limit },
        Sweep::Expiry => SweepQuery::Expired { now, limit },
    })
}

/// The `sweep` label of a sweep.
fn sweep_label(sweep: Sweep) -> &'static str {
    match sweep {
        Sweep::Timeouts => "timeouts",
        Sweep::Orphans => "orphans",
        Sweep::Expiry => "expiry",
    }
}
