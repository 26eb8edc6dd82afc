//! The runtime's metrics: every name it records, in one place, and
//! [`Metrics`], the small facade its passes record through.
//!
//! Recording goes through the [`metrics`] crate. A runtime given a recorder
//! of its own ([`Metrics::to`]) records into that one only (a server's
//! `/metrics` scrapes exactly its runtime, even with several in one
//! process); otherwise into whatever global recorder the application
//! installed (none: nothing is recorded, at the cost of a branch).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_core::{FailureClass, TaskStatus};

/// The metric names, each with its labels. Counters end in `_total`,
/// histograms in their unit.
pub mod names {
    /// Counter `{tool}`: tasks created (an idempotent join is not a creation).
    pub const CREATED: &str = "mcp_tasks_created_total";
    /// Counter `{tool, outcome}`: tasks that ended, by how — `completed`,
    /// `failed`, `dead_lettered`, `cancelled`, `timed_out`, `orphaned`.
    pub const FINISHED: &str = "mcp_tasks_finished_total";
    /// Counter `{tool, class}`: attempts run again — `transient` (the
    /// executor's backoff) or `executor_lost` (triage resumed a task whose
    /// executor died).
    pub const RETRIES: &str = "mcp_tasks_retries_total";
    /// Gauge `{status, tool}`: tasks in the store, counted when scraped;
    /// every status of every tool seen is set, 0 included, so a pair that
    /// empties reads 0, not its last count.
    pub const TASKS: &str = "mcp_tasks_tasks";
    /// Gauge: dead letters not yet requeued, counted when scraped.
    pub const DEAD_LETTERS: &str = "mcp_tasks_dead_letters";
    /// Counter: reaper passes run (only the maintenance leader's count grows).
    pub const REAPER_PASSES: &str = "mcp_tasks_reaper_passes_total";
    /// Counter `{sweep}`: sweeps run — `timeouts`, `orphans`, `expiry`.
    pub const REAPER_SWEEPS: &str = "mcp_tasks_reaper_sweeps_total";
    /// Counter `{sweep}`: tasks a sweep acted on (failed, cancelled, deleted).
    pub const REAPER_SWEPT: &str = "mcp_tasks_reaper_swept_tasks_total";
    /// Histogram `{sweep}`: how long one sweep took.
    pub const REAPER_SWEEP_SECONDS: &str = "mcp_tasks_reaper_sweep_duration_seconds";
    /// Counter `{tool}`: live tasks cancelled as unpolled for the orphan window.
    pub const ORPHANS_CANCELLED: &str = "mcp_tasks_orphans_cancelled_total";
    /// Counter: handlers here whose lease was lost (renewal refused or
    /// lapsed while the store was unreachable); they stop.
    pub const LEASE_EXPIRIES: &str = "mcp_tasks_lease_expiries_total";
    /// Counter `{tool}`: tasks whose lease had lapsed, taken over by triage
    /// (resumed, re-asked or ended) — an executor died or stalled.
    pub const LEASE_TAKEOVERS: &str = "mcp_tasks_lease_takeovers_total";
    /// Counter `{decision}`: triage decisions applied — `resumed`,
    /// `reasked`, `failed`, `poisoned`, `cancelled`.
    pub const TRIAGED: &str = "mcp_tasks_triaged_total";
    /// Counter `{via}`: attempts this process started — `claim` (a claim
    /// took the task from the store) or `dispatch` (created with a free
    /// slot, it started without a claim).
    pub const ATTEMPTS_STARTED: &str = "mcp_tasks_attempts_started_total";
    /// Counter `{tool}`: `tasks/get` reads of a visible task.
    pub const POLLS: &str = "mcp_tasks_polls_total";
    /// Histogram `{operation}`: one store call as the runtime saw it.
    pub const STORE_SECONDS: &str = "mcp_tasks_store_operation_duration_seconds";
    /// Counter `{operation}`: store calls that failed.
    pub const STORE_ERRORS: &str = "mcp_tasks_store_errors_total";
    /// Counter: group commits (transactions) the store's writer made.
    pub const STORE_COMMITS: &str = "mcp_tasks_store_commits_total";
    /// Counter: writes those commits carried; divided by
    /// [`STORE_COMMITS`] it is the group-commit batch size.
    pub const STORE_COMMITTED_WRITES: &str = "mcp_tasks_store_committed_writes_total";

    /// Every name above.
    pub const ALL: &[&str] = &[
        CREATED,
        FINISHED,
        RETRIES,
        TASKS,
        DEAD_LETTERS,
        REAPER_PASSES,
        REAPER_SWEEPS,
        REAPER_SWEPT,
        REAPER_SWEEP_SECONDS,
        ORPHANS_CANCELLED,
        LEASE_EXPIRIES,
        LEASE_TAKEOVERS,
        TRIAGED,
        ATTEMPTS_STARTED,
        POLLS,
        STORE_SECONDS,
        STORE_ERRORS,
        STORE_COMMITS,
        STORE_COMMITTED_WRITES,
    ];
}

/// How a task ended, as the `outcome` label of [`names::FINISHED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its tool returned a result.
    Completed,
    /// A permanent failure, a protocol error, or triage could not re-run it.
    Failed,
    /// Transient failures (or restarts) used up its attempts.
    DeadLettered,
    /// A client cancelled it.
    Cancelled,
    /// Its deadline passed.
    TimedOut,
    /// No client polled it for the orphan window.
    Orphaned,
}

impl Outcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::DeadLettered => "dead_lettered",
            Outcome::Cancelled => "cancelled",
            Outcome::TimedOut => "timed_out",
            Outcome::Orphaned => "orphaned",
        }
    }
}

/// Where a runtime's metrics go. Cheap to clone.
#[derive(Clone, Default)]
pub struct Metrics {
    recorder: Option<Arc<dyn metrics::Recorder + Send + Sync>>,
    /// Every tool the tasks gauge has a series for (its zeros are kept fresh).
    gauged_tools: Arc<Mutex<BTreeSet<String>>>,
    /// The handles of the series every poll records into, registered on
    /// first use with an own recorder: a poll then builds no key and hashes
    /// no labels into the recorder's registry (it did, twice per poll).
    per_poll: Arc<Mutex<PerPoll>>,
}

/// Series handles by label value (tools: the registered ones; operations:
/// the store's, a fixed set).
#[derive(Default)]
struct PerPoll {
    polls: HashMap<String, metrics::Counter>,
    store_seconds: HashMap<&'static str, metrics::Histogram>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("own_recorder", &self.recorder.is_some()).finish()
    }
}

impl Metrics {
    /// Records into the process's global recorder (the default).
    pub fn global() -> Self {
        Metrics { recorder: None, gauged_tools: Arc::default(), per_poll: Arc::default() }
    }

    /// Records into `recorder` only.
    pub fn to(recorder: Arc<dyn metrics::Recorder + Send + Sync>) -> Self {
        Metrics { recorder: Some(recorder), gauged_tools: Arc::default(), per_poll: Arc::default() }
    }

    /// Runs `record` (which uses the `metrics` macros) against this
    /// runtime's recorder. Recording is synchronous, so the recorder is
    /// installed for exactly the closure, on this thread.
    pub fn record(&self, record: impl FnOnce()) {
        match &self.recorder {
            Some(recorder) => metrics::with_local_recorder(recorder.as_ref(), record),
            None => record(),
        }
    }

    pub(crate) fn created(&self, tool: &str) {
        let tool = tool.to_owned();
        self.record(|| metrics::counter!(names::CREATED, "tool" => tool).increment(1));
    }

    /// `n` attempts started, by a claim or at creation (`dispatched`).
    pub(crate) fn attempts_started(&self, n: usize, dispatched: bool) {
        let via = if dispatched { "dispatch" } else { "claim" };
        self.record(|| metrics::counter!(names::ATTEMPTS_STARTED, "via" => via).increment(n as u64));
    }

    pub(crate) fn finished(&self, tool: &str, outcome: Outcome) {
        let tool = tool.to_owned();
        self.record(|| metrics::counter!(names::FINISHED, "tool" => tool, "outcome" => outcome.as_str()).increment(1));
    }

    pub(crate) fn retried(&self, tool: &str, class: &'static str) {
        let tool = tool.to_owned();
        self.record(|| metrics::counter!(names::RETRIES, "tool" => tool, "class" => class).increment(1));
    }

    pub(crate) fn reaper_pass(&self) {
        self.record(|| metrics::counter!(names::REAPER_PASSES).increment(1));
    }

    pub(crate) fn sweep(&self, sweep: &'static str, acted_on: usize, took: Duration) {
        self.record(|| {
            metrics::counter!(names::REAPER_SWEEPS, "sweep" => sweep).increment(1);
            metrics::counter!(names::REAPER_SWEPT, "sweep" => sweep).increment(acted_on as u64);
            metrics::histogram!(names::REAPER_SWEEP_SECONDS, "sweep" => sweep).record(took.as_secs_f64());
        });
    }

    pub(crate) fn orphan_cancelled(&self, tool: &str) {
        let tool = tool.to_owned();
        self.record(|| metrics::counter!(names::ORPHANS_CANCELLED, "tool" => tool).increment(1));
    }

    pub(crate) fn lease_expired(&self) {
        self.record(|| metrics::counter!(names::LEASE_EXPIRIES).increment(1));
    }

    pub(crate) fn lease_taken_over(&self, tool: &str) {
        let tool = tool.to_owned();
        self.record(|| metrics::counter!(names::LEASE_TAKEOVERS, "tool" => tool).increment(1));
    }

    pub(crate) fn triaged(&self, decision: &'static str) {
        self.record(|| metrics::counter!(names::TRIAGED, "decision" => decision).increment(1));
    }

    /// The per-poll handles, when kept: only with an own recorder (a handle
    /// of the global one would stay a no-op if one were installed later).
    fn per_poll(&self) -> Option<std::sync::MutexGuard<'_, PerPoll>> {
        self.recorder.as_ref()?;
        Some(self.per_poll.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(crate) fn polled(&self, tool: &str) {
        let Some(mut kept) = self.per_poll() else {
            let tool = tool.to_owned();
            return self.record(|| metrics::counter!(names::POLLS, "tool" => tool).increment(1));
        };
        if let Some(counter) = kept.polls.get(tool) {
            return counter.increment(1);
        }
        let mut counter = None;
        let label = tool.to_owned();
        self.record(|| counter = Some(metrics::counter!(names::POLLS, "tool" => label)));
        let counter = counter.unwrap_or_else(metrics::Counter::noop);
        counter.increment(1);
        kept.polls.insert(tool.to_owned(), counter);
    }

    pub(crate) fn store_call(&self, operation: &'static str, took: Duration, failed: bool) {
        let seconds = took.as_secs_f64();
        match self.per_poll() {
            Some(mut kept) => {
                let histogram = kept.store_seconds.entry(operation).or_insert_with(|| {
                    let mut histogram = None;
                    self.record(|| histogram = Some(metrics::histogram!(names::STORE_SECONDS, "operation" => operation)));
                    histogram.unwrap_or_else(metrics::Histogram::noop)
                });
                histogram.record(seconds);
            }
            None => self.record(|| metrics::histogram!(names::STORE_SECONDS, "operation" => operation).record(seconds)),
        }
        if failed {
            self.record(|| metrics::counter!(names::STORE_ERRORS, "operation" => operation).increment(1));
        }
    }

    /// Sets the tasks gauge from `counts` for every status of every tool in
    /// `counts` or gauged before (0 where there are none).
    pub(crate) fn tasks_by_status_and_tool(&self, counts: &BTreeMap<(TaskStatus, String), u64>) {
        let gauged: Vec<String> = {
            let mut gauged = self.gauged_tools.lock().unwrap_or_else(|p| p.into_inner());
            gauged.extend(counts.keys().map(|(_, tool)| tool.clone()));
            gauged.iter().cloned().collect()
        };
        self.record(|| {
            for tool in &gauged {
                for status in mcp_tasks_core::status::ALL_STATUSES {
                    let n = counts.get(&(status, tool.clone())).copied().unwrap_or(0);
                    metrics::gauge!(names::TASKS, "status" => status.to_string(), "tool" => tool.clone()).set(n as f64);
                }
            }
        });
    }

    pub(crate) fn dead_letters(&self, depth: usize) {
        self.record(|| metrics::gauge!(names::DEAD_LETTERS).set(depth as f64));
    }

    /// The store writer's totals since it opened (commits, and the writes
    /// they carried), for a store that group-commits; set as absolute counters.
    pub fn group_commits(&self, commits: u64, writes: u64) {
        self.record(|| {
            metrics::counter!(names::STORE_COMMITS).absolute(commits);
            metrics::counter!(names::STORE_COMMITTED_WRITES).absolute(writes);
        });
    }
}

/// The `class` label of a retry after a failure of `class`.
pub(crate) fn retry_class(class: FailureClass) -> &'static str {
    match class {
        FailureClass::Transient => "transient",
        FailureClass::Permanent => "permanent",
        FailureClass::Poison => "poison",
    }
}
