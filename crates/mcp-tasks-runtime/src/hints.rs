//! The poll hint a task advertises: from the tool's declared duration, else
//! from the median of its recent completed durations (paper §6.2), cached so
//! a poll does not cost a history query.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use mcp_tasks_core::hint::expected_from_history;
use mcp_tasks_core::{HintPolicy, Timestamp};
use mcp_tasks_store::TaskStore;

/// How many recent completions a learned duration is drawn from.
pub const HISTORY_SAMPLE: usize = 50;

/// How long a learned duration is trusted before the history is read again.
pub const HISTORY_REFRESH: Duration = Duration::from_secs(30);

/// Poll hints per tool.
#[derive(Debug)]
pub(crate) struct Hints {
    policy: HintPolicy,
    declared: HashMap<String, Duration>,
    learned: Mutex<HashMap<String, (Timestamp, Option<Duration>)>>,
}

impl Hints {
    pub(crate) fn new(policy: HintPolicy, declared: HashMap<String, Duration>) -> Self {
        Hints { policy, declared, learned: Mutex::new(HashMap::new()) }
    }

    fn learned(&self) -> MutexGuard<'_, HashMap<String, (Timestamp, Option<Duration>)>> {
        self.learned.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The expected duration of `tool`: declared, else learned (refreshed at
    /// most every [`HISTORY_REFRESH`]). A failing history read keeps the old value.
    pub(crate) async fn expected(&self, tool: &str, store: &dyn TaskStore, now: Timestamp) -> Option<Duration> {
        if let Some(d) = self.declared.get(tool) {
            return Some(*d);
        }
        let cached = self.learned().get(tool).copied();
        if let Some((at, value)) = cached
            && now >= at
            && now.since(at) < HISTORY_REFRESH
        {
            return value;
        }
        match store.recent_durations(tool, HISTORY_SAMPLE).await {
            Ok(history) => {
                let value = expected_from_history(&history);
                self.learned().insert(tool.to_owned(), (now, value));
                value
            }
            Err(e) => {
                tracing::warn!(tool, error = %e, "cannot read task history for the poll hint");
                cached.and_then(|(_, v)| v)
            }
        }
    }

    /// `pollIntervalMs` for a task of `tool`.
    pub(crate) async fn poll_interval_ms(&self, tool: &str, store: &dyn TaskStore, now: Timestamp) -> u64 {
        let hint = self.policy.hint_for(self.expected(tool, store, now).await);
        u64::try_from(hint.as_millis()).unwrap_or(u64::MAX)
    }
}
