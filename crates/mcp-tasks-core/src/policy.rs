//! All of a server's policy in one value, with one check that the parts fit
//! together (the cross-party invariant of paper §6.4 among them).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::classify::ClassifierConfig;
use crate::hint::HintPolicy;
use crate::retention::RetentionPolicy;
use crate::retry::RetryPolicy;

/// A server's policy: classification, retry, retention, poll hints, and the
/// timing of its maintenance loops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Failure classification.
    pub classifier: ClassifierConfig,
    /// Retries.
    pub retry: RetryPolicy,
    /// Retention and reclamation windows.
    pub retention: RetentionPolicy,
    /// Poll hints.
    pub poll_hint: HintPolicy,
    /// How often the reaper sweeps.
    #[serde(with = "crate::serde_duration")]
    pub reaper_interval: Duration,
    /// How long an executor's lease lasts unless renewed (renewed at a third).
    #[serde(with = "crate::serde_duration")]
    pub lease_duration: Duration,
    /// How often buffered poll timestamps are written.
    #[serde(with = "crate::serde_duration")]
    pub poll_flush_interval: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            classifier: ClassifierConfig::default(),
            retry: RetryPolicy::default(),
            retention: RetentionPolicy::default(),
            poll_hint: HintPolicy::default(),
            reaper_interval: Duration::from_secs(30),
            lease_duration: Duration::from_secs(30),
            poll_flush_interval: Duration::from_secs(1),
        }
    }
}

/// The reaper must sweep at least this many times per window it enforces
/// (the cascade rule: a governing loop runs slower than what it governs).
pub const SWEEPS_PER_WINDOW: u32 = 4;

impl Policy {
    /// The shortest window the reaper enforces (orphan window or execution limit).
    pub fn shortest_window(&self) -> Duration {
        self.retention.orphan_after.min(self.retention.max_execution)
    }

    /// The longest reaper interval the windows allow: a
    /// [`SWEEPS_PER_WINDOW`]th of the shortest one.
    pub fn largest_reaper_interval(&self) -> Duration {
        self.shortest_window() / SWEEPS_PER_WINDOW
    }

    /// The longest poll-flush interval the orphan window allows: half of it.
    pub fn largest_poll_flush_interval(&self) -> Duration {
        self.retention.orphan_after / 2
    }

    /// This policy with every period and hint bound that depends on the
    /// windows brought within what [`validate`](Self::validate) accepts for
    /// them (the windows themselves unchanged): the reaper and poll-flush
    /// intervals, and the hint's bounds, each at most its largest allowed
    /// value; the reaper interval stays positive.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_tasks_core::Policy;
    ///
    /// let mut p = Policy::default();
    /// p.retention.orphan_after = Duration::from_secs(100);
    /// assert!(p.validate().is_err(), "a 60 s hint and a 30 s sweep are too slow for a 100 s window");
    /// let p = p.fitted_to_windows();
    /// p.validate().unwrap();
    /// assert_eq!(p.reaper_interval, Duration::from_secs(25));
    /// assert_eq!(p.poll_hint.max, Duration::from_secs(50));
    /// ```
    pub fn fitted_to_windows(mut self) -> Policy {
        self.reaper_interval = self.reaper_interval.min(self.largest_reaper_interval()).max(Duration::from_nanos(1));
        self.poll_flush_interval = self.poll_flush_interval.min(self.largest_poll_flush_interval());
        let largest_hint = HintPolicy::largest_hint(self.retention.orphan_after);
        self.poll_hint.max = self.poll_hint.max.min(largest_hint);
        self.poll_hint.unknown = self.poll_hint.unknown.min(largest_hint);
        self.poll_hint.min = self.poll_hint.min.min(self.poll_hint.max);
        self
    }

    /// Checks every part and how they fit; the message names the setting.
    /// The first of [`problems`](Self::problems), if any.
    pub fn validate(&self) -> Result<(), String> {
        match self.problems().into_iter().next() {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// Every rule this policy breaks, one message each, naming the setting,
    /// the numbers and what to change (empty when it is valid). A part's own
    /// checks (retry, retention, poll hint) report their first problem.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        problems.extend(self.retry.validate().err());
        problems.extend(self.retention.validate().err());
        problems.extend(self.poll_hint.validate(self.retention.orphan_after).err());
        if self.reaper_interval.is_zero() || self.reaper_interval > self.largest_reaper_interval() {
            problems.push(format!(
                "reaper_interval ({:?}) must be positive and at most a {}th of the shortest window it enforces ({:?}): \
                 set it to {:?} or less",
                self.reaper_interval,
                SWEEPS_PER_WINDOW,
                self.shortest_window(),
                self.largest_reaper_interval()
            ));
        }
        if self.lease_duration < Duration::from_millis(100) {
            problems.push(format!("lease_duration ({:?}) must be at least 100ms", self.lease_duration));
        }
        if self.poll_flush_interval > self.largest_poll_flush_interval() {
            problems.push(format!(
                "poll_flush_interval ({:?}) must be well under the orphan window ({:?}): set it to {:?} or less",
                self.poll_flush_interval,
                self.retention.orphan_after,
                self.largest_poll_flush_interval()
            ));
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Policy::default().validate().unwrap();
    }

    #[test]
    fn a_slow_reaper_is_refused() {
        let p = Policy { reaper_interval: Duration::from_secs(600), ..Default::default() };
        assert!(p.validate().unwrap_err().contains("reaper_interval"));
    }

    #[test]
    fn a_hint_beyond_the_orphan_window_is_refused() {
        let mut p = Policy::default();
        p.retention.orphan_after = Duration::from_secs(100);
        p.reaper_interval = Duration::from_secs(10);
        assert!(p.validate().unwrap_err().contains("poll_hint"));
    }
}
