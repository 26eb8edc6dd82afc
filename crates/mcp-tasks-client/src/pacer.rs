//! Wires the server's numbers into the core poll schedule: `pollIntervalMs`
//! is the floor passed to every delay, and the advertised orphan window
//! (or, failing that, `ttlMs`) sets the ceiling.

use std::time::Duration;

use mcp_tasks_core::{PollPolicy, PollScheduler, RandomSource};
use rmcp::model::{MetaObject, Task};

/// The vendor `_meta` key under which an mcp-tasks server advertises its
/// orphan window (ms) on task results. Deliberately outside the reserved
/// `io.modelcontextprotocol/` prefix.
pub const ORPHAN_WINDOW_META_KEY: &str = "dev.mcp-tasks/orphanWindowMs";

/// The numbers a server advertises about one task, from one of its answers.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ServerHints {
    /// `pollIntervalMs`, if given.
    pub poll_interval_ms: Option<u64>,
    /// `ttlMs`; `None` is unlimited.
    pub ttl_ms: Option<u64>,
    /// The orphan window from [`ORPHAN_WINDOW_META_KEY`], if the server advertises one.
    pub orphan_window_ms: Option<u64>,
}

impl ServerHints {
    /// Reads the hints from a task and the `_meta` of the result carrying it.
    pub fn from_task(task: &Task, meta: Option<&MetaObject>) -> Self {
        let orphan_window_ms = meta.and_then(|m| m.0.get(ORPHAN_WINDOW_META_KEY)).and_then(|v| {
            // Accept an integer or a float the way JSON producers differ.
            v.as_u64().or_else(|| v.as_f64().filter(|f| f.is_finite() && *f > 0.0).map(|f| f as u64))
        });
        ServerHints { poll_interval_ms: task.poll_interval_ms, ttl_ms: task.ttl_ms, orphan_window_ms }
    }

    /// The window that caps the poll gap: the orphan window if advertised, else `ttlMs`.
    pub fn ceiling_window_ms(&self) -> Option<u64> {
        self.orphan_window_ms.filter(|w| *w > 0).or(self.ttl_ms.filter(|t| *t > 0))
    }
}

/// One task's pacing: a [`PollScheduler`] fed with the server's latest hints.
#[derive(Debug)]
pub struct PollPacer<R: RandomSource> {
    scheduler: PollScheduler<R>,
    hints: ServerHints,
}

impl<R: RandomSource> PollPacer<R> {
    /// A fresh pacer with `policy` and its jitter source.
    pub fn new(policy: PollPolicy, rng: R) -> Self {
        PollPacer { scheduler: PollScheduler::new(policy, rng), hints: ServerHints::default() }
    }

    /// Takes in the hints from the server's latest answer. A hint the server
    /// omits this time keeps its last known value (the values MAY change, but
    /// a missing one is not a retraction).
    pub fn observe(&mut self, hints: ServerHints) {
        let merged = ServerHints {
            poll_interval_ms: hints.poll_interval_ms.or(self.hints.poll_interval_ms),
            ttl_ms: hints.ttl_ms.or(self.hints.ttl_ms),
            orphan_window_ms: hints.orphan_window_ms.or(self.hints.orphan_window_ms),
        };
        if merged.ceiling_window_ms() != self.hints.ceiling_window_ms() {
            self.scheduler.set_orphan_window_ms(merged.ceiling_window_ms().map(|w| w as f64));
        }
        self.hints = merged;
    }

    /// The hints in force.
    pub fn hints(&self) -> ServerHints {
        self.hints
    }

    /// The cap the ceiling window imposes, ms, if one is known.
    pub fn ceiling_ms(&self) -> Option<f64> {
        self.scheduler.ceiling_ms()
    }

    /// How long to wait before the next `tasks/get`, ms: the core schedule
    /// with the server's `pollIntervalMs` as the floor of this and every delay.
    pub fn next_delay_ms(&mut self) -> f64 {
        let hint = self.hints.poll_interval_ms.map(|ms| ms as f64);
        self.scheduler.next_delay_ms(hint)
    }

    /// [`PollPacer::next_delay_ms`] as a [`Duration`].
    pub fn next_delay(&mut self) -> Duration {
        Duration::from_secs_f64(self.next_delay_ms().max(0.0) / 1000.0)
    }
}
