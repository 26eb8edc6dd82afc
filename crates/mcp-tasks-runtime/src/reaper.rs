//! The reaper service (paper §5.1): one pass runs timeouts, then orphans,
//! then expiry. Each sweep reads candidates in batches, asks
//! [`mcp_tasks_core::reaper::decide`] about each, and applies the decisions
//! as one guarded write per batch, guarded on the version it read (orphans
//! also on "no poll since the cutoff"), so a task that changed meanwhile is
//! left alone.

use mcp_tasks_core::reaper::{self, SWEEP_ORDER};
use mcp_tasks_core::{Sweep, SweepContext, TaskRecord};
use mcp_tasks_store::{Guard, GuardedUpdate, SweepQuery, UpdateOutcome};

use crate::error::RuntimeError;
use crate::running::StopReason;
use crate::shared::Shared;
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

/// One pass: flush buffered polls, then each sweep in order.
pub(crate) async fn reap_once(shared: &Shared) -> Result<ReapReport, RuntimeError> {
    // Polls noted before this pass must count, or a polled task could be reaped.
    shared.polls.flush(shared.store.as_ref()).await?;
    let mut report = ReapReport::default();
    for sweep in SWEEP_ORDER {
        let n = run_sweep(shared, sweep).await?;
        match sweep {
            Sweep::Timeouts => report.timed_out = n,
            Sweep::Orphans => report.orphaned = n,
            Sweep::Expiry => report.expired = n,
        }
    }
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

async fn run_sweep(shared: &Shared, sweep: Sweep) -> Result<usize, RuntimeError> {
    let now = shared.now();
    let ctx = SweepContext { now, retention: &shared.policy.retention, silence_floor: shared.started_at };
    let query = match sweep {
        Sweep::Timeouts => SweepQuery::PastDeadline { now, limit: SWEEP_BATCH },
        Sweep::Orphans => match ctx.orphan_cutoff() {
            Some(cutoff) => SweepQuery::Unseen { cutoff, limit: SWEEP_BATCH },
            // This instance has not watched long enough to call anything abandoned.
            None => return Ok(0),
        },
        Sweep::Expiry => SweepQuery::Expired { now, limit: SWEEP_BATCH },
    };
    let mut done = 0;
    for _ in 0..MAX_BATCHES_PER_SWEEP {
        let candidates = shared.store.sweep_candidates(query.clone()).await?;
        let full = candidates.len() >= SWEEP_BATCH;
        let updates: Vec<(TaskRecord, GuardedUpdate)> = candidates
            .into_iter()
            .filter_map(|record| {
                let action = reaper::decide(sweep, &record, &ctx)?;
                let guard = Guard { last_seen_at_or_before: ctx.orphan_cutoff().filter(|_| sweep == Sweep::Orphans), ..Guard::read(&record) };
                let update = GuardedUpdate { guard, update: transitions::reaper_update(action, now, &shared.policy.retention) };
                Some((record, update))
            })
            .collect();
        if updates.is_empty() {
            break;
        }
        let (records, updates): (Vec<_>, Vec<_>) = updates.into_iter().unzip();
        let outcomes = shared.store.apply(updates).await?;
        let mut applied = 0;
        for (record, outcome) in records.iter().zip(&outcomes) {
            match outcome {
                UpdateOutcome::Applied(_) => {
                    applied += 1;
                    // A local handler of a timed-out or orphaned task must stop;
                    // its own write would lose the guard anyway.
                    shared.running.stop(&record.id, StopReason::LeaseLost);
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

