//! Triage of in-flight work whose executor died (paper §5.2): every lease at
//! a single-node start, lapsed leases periodically. The decision is
//! [`mcp_tasks_core::triage`]; this applies it, guarded on the version read.
//! [`Triage`] holds only what the pass uses; its loop (lapsed leases, on the
//! reaper's period) is [`Triage::spawn`].

use std::collections::BTreeSet;
use std::sync::Arc;

use mcp_tasks_core::{Clock, RetentionPolicy, TriageDecision, triage};
use mcp_tasks_store::{Guard, GuardedUpdate, SweepQuery, TaskStore, UpdateOutcome};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;
use crate::maintenance::{self, Schedule};
use crate::metrics::{Metrics, Outcome};
use crate::reaper::{MAX_BATCHES_PER_SWEEP, SWEEP_BATCH};
use crate::running::Running;
use crate::transitions;
use crate::wakeups::Wakeups;

/// Which leases triage takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriageScope {
    /// Every lease not held by this runtime: a single-node restart, where
    /// any other lease belongs to a dead process.
    AllLeases,
    /// Only leases that have lapsed (their executor stopped renewing).
    ExpiredLeases,
}

/// What one triage pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TriageReport {
    /// Re-queued as the next attempt.
    pub resumed: usize,
    /// Waiting for input when their executor died: re-queued as the same
    /// attempt, to ask again (or go on with answers that arrived).
    pub reasked: usize,
    /// Failed: past the deadline, or not safe to re-run.
    pub failed: usize,
    /// Failed as poison (out of attempts) and dead-lettered.
    pub poisoned: usize,
    /// Cancelled, as their client had asked.
    pub cancelled: usize,
}

impl TriageReport {
    /// How many tasks the pass settled.
    pub fn total(&self) -> usize {
        self.resumed + self.reasked + self.failed + self.poisoned + self.cancelled
    }
}

impl std::fmt::Display for TriageReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} resumed, {} re-asked, {} failed, {} poisoned, {} cancelled",
            self.resumed, self.reasked, self.failed, self.poisoned, self.cancelled
        )
    }
}

/// What happened to one task, in the words the log uses.
fn outcome_words(decision: &TriageDecision) -> &'static str {
    match decision {
        TriageDecision::Resume { .. } => "resumed as its next attempt",
        TriageDecision::Reask { .. } => "re-asked for input, attempt unspent",
        TriageDecision::Cancel => "cancelled, as its client had asked",
        TriageDecision::FailTimeout(_) => "failed: past its deadline",
        TriageDecision::FailNotRerunnable(_) => "failed: its tool is not safe to re-run",
        TriageDecision::Poison(_) => "failed as poison and dead-lettered",
    }
}

/// The `decision` label (metrics and log field) of a decision.
fn decision_label(decision: &TriageDecision) -> &'static str {
    match decision {
        TriageDecision::Resume { .. } => "resumed",
        TriageDecision::Reask { .. } => "reasked",
        TriageDecision::Cancel => "cancelled",
        TriageDecision::FailTimeout(_) | TriageDecision::FailNotRerunnable(_) => "failed",
        TriageDecision::Poison(_) => "poisoned",
    }
}

/// Triage's settings.
#[derive(Debug, Clone)]
pub(crate) struct TriageConfig {
    /// The tools safe to run again from the start; any other (an unknown
    /// tool included) is not re-run.
    pub(crate) rerunnable: BTreeSet<String>,
    /// Retention of the tasks it ends.
    pub(crate) retention: RetentionPolicy,
    /// When its loop runs (lapsed leases, every `reaper_interval`; a fleet
    /// gates it on leadership).
    pub(crate) schedule: Schedule,
}

/// The triage pass and what it uses.
pub(crate) struct Triage {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) clock: Arc<dyn Clock>,
    /// This process's own handlers are never triaged (they renew their leases).
    pub(crate) running: Arc<Running>,
    /// Woken when a task is handed back to run.
    pub(crate) wakeups: Arc<Wakeups>,
    /// Where decisions and takeovers are counted.
    pub(crate) metrics: Metrics,
    pub(crate) config: TriageConfig,
}

impl Triage {
    /// Runs lapsed-lease triage on its schedule until `stop`.
    pub(crate) fn spawn(self: &Arc<Self>, stop: CancellationToken) -> JoinHandle<()> {
        let triage = self.clone();
        maintenance::spawn_pass("lapsed-lease triage", self.config.schedule.clone(), stop, move || {
            let triage = triage.clone();
            async move {
                let report = triage.triage_once(TriageScope::ExpiredLeases).await?;
                if report.total() > 0 {
                    tracing::info!(
                        resumed = report.resumed,
                        reasked = report.reasked,
                        failed = report.failed,
                        poisoned = report.poisoned,
                        cancelled = report.cancelled,
                        "lapsed-lease triage: {report}"
                    );
                }
                Ok(())
            }
        })
    }

    /// Counts a decision applied to a task of `tool` whose holder was gone.
    fn count(&self, tool: &str, decision: &TriageDecision) {
        let metrics = &self.metrics;
        metrics.lease_taken_over(tool);
        metrics.triaged(decision_label(decision));
        match decision {
            TriageDecision::Resume { .. } => metrics.retried(tool, "executor_lost"),
            TriageDecision::Reask { .. } => {}
            TriageDecision::Cancel => metrics.finished(tool, Outcome::Cancelled),
            TriageDecision::FailTimeout(_) => metrics.finished(tool, Outcome::TimedOut),
            TriageDecision::FailNotRerunnable(_) => metrics.finished(tool, Outcome::Failed),
            TriageDecision::Poison(_) => metrics.finished(tool, Outcome::DeadLettered),
        }
    }

    /// One pass over `scope`.
    pub(crate) async fn triage_once(&self, scope: TriageScope) -> Result<TriageReport, RuntimeError> {
        let mut report = TriageReport::default();
        for _ in 0..MAX_BATCHES_PER_SWEEP {
            let now = self.clock.now();
            let before = match scope {
                TriageScope::AllLeases => None,
                TriageScope::ExpiredLeases => Some(now),
            };
            let candidates = self.store.sweep_candidates(SweepQuery::Leased { before, limit: SWEEP_BATCH }).await?;
            let full = candidates.len() >= SWEEP_BATCH;
            let mut decided = Vec::new();
            let mut updates = Vec::new();
            for record in candidates {
                // Never triage our own running handlers (they renew their leases).
                if record.lease.as_ref().is_some_and(|l| self.running.holds(&record.id, &l.owner)) {
                    continue;
                }
                // An unknown tool cannot be re-run here: treat it as not re-runnable.
                let rerunnable = self.config.rerunnable.contains(&record.tool);
                let decision = triage(&record, now, rerunnable);
                let change = transitions::triage_change(decision.clone(), &record, now, &self.config.retention);
                updates.push(GuardedUpdate::change(Guard::read(&record), change));
                decided.push((record.id, record.tool, record.attempt, decision));
            }
            if updates.is_empty() {
                break;
            }
            let outcomes = self.store.apply(updates).await?;
            let mut applied = 0;
            for ((id, tool, attempt, decision), outcome) in decided.iter().zip(&outcomes) {
                if !matches!(outcome, UpdateOutcome::Applied(_)) {
                    tracing::debug!(task = %id, tool = %tool, "triage skipped a task that changed since it was read");
                    continue;
                }
                applied += 1;
                let outcome = outcome_words(decision);
                let label = decision_label(decision);
                if matches!(decision, TriageDecision::Poison(_)) {
                    tracing::warn!(task = %id, tool = %tool, attempt, decision = label, "lease taken over: {outcome}");
                } else {
                    tracing::info!(task = %id, tool = %tool, attempt, decision = label, "lease taken over: {outcome}");
                }
                self.count(tool, decision);
                match decision {
                    TriageDecision::Resume { .. } => report.resumed += 1,
                    TriageDecision::Reask { .. } => report.reasked += 1,
                    TriageDecision::Poison(_) => report.poisoned += 1,
                    TriageDecision::Cancel => report.cancelled += 1,
                    TriageDecision::FailTimeout(_) | TriageDecision::FailNotRerunnable(_) => report.failed += 1,
                }
            }
            if report.resumed + report.reasked > 0 {
                self.wakeups.work_available();
            }
            if !full || applied == 0 {
                break;
            }
        }
        Ok(report)
    }
}
