//! The server's `pollIntervalMs` (paper §6.2): the lever that puts a client in
//! the right duration regime. It follows the tool's expected duration
//! (declared, or learned from the store's history), not a constant.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How the server turns an expected duration into a poll hint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HintPolicy {
    /// The hint as a share of the expected duration: a client polling at
    /// this fraction is stale by about half of it, relative to the task.
    pub fraction: f64,
    /// Smallest hint.
    #[serde(with = "crate::serde_duration")]
    pub min: Duration,
    /// Largest hint (further capped under the orphan window by validation).
    #[serde(with = "crate::serde_duration")]
    pub max: Duration,
    /// Hint when nothing is known about the tool.
    #[serde(with = "crate::serde_duration")]
    pub unknown: Duration,
}

impl Default for HintPolicy {
    fn default() -> Self {
        HintPolicy {
            fraction: 0.02,
            min: Duration::from_millis(250),
            max: Duration::from_secs(60),
            unknown: Duration::from_secs(1),
        }
    }
}

impl HintPolicy {
    /// The hint for a task expected to take `expected`, or the default for
    /// an unknown duration; always within `[min, max]`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_tasks_core::HintPolicy;
    ///
    /// let hints = HintPolicy::default(); // 2 %, within [250 ms, 60 s]; 1 s if unknown
    /// assert_eq!(hints.hint_for(Some(Duration::from_secs(60))), Duration::from_millis(1_200));
    /// assert_eq!(hints.hint_for(Some(Duration::from_secs(1))), Duration::from_millis(250));
    /// assert_eq!(hints.hint_for(Some(Duration::from_secs(24 * 3600))), Duration::from_secs(60));
    /// assert_eq!(hints.hint_for(None), Duration::from_secs(1));
    /// // Validation keeps the largest hint inside half the orphan window.
    /// assert!(hints.validate(Duration::from_secs(900)).is_ok());
    /// assert!(hints.validate(Duration::from_secs(100)).is_err());
    /// ```
    pub fn hint_for(&self, expected: Option<Duration>) -> Duration {
        let raw = match expected {
            // Saturating: a long duration times a large fraction must not overflow
            // (from_secs_f64 would panic); the clamp below caps it at `max`.
            Some(e) => Duration::try_from_secs_f64((e.as_secs_f64() * self.fraction).max(0.0)).unwrap_or(Duration::MAX),
            None => self.unknown,
        };
        raw.clamp(self.min, self.max.max(self.min))
    }

    /// The largest hint a server with `orphan_window` may give: the share of
    /// the window a client lets pass between polls at most.
    pub fn largest_hint(orphan_window: Duration) -> Duration {
        orphan_window.mul_f64(crate::poll::ORPHAN_WINDOW_SHARE)
    }

    /// The hint may never tell a client to stay silent for as long as the
    /// server's orphan window would tolerate: the largest hint must fit in
    /// half of it (the client's own [`ORPHAN_WINDOW_SHARE`](crate::poll::ORPHAN_WINDOW_SHARE)).
    pub fn validate(&self, orphan_window: Duration) -> Result<(), String> {
        let limit = Self::largest_hint(orphan_window);
        if !(self.fraction.is_finite() && self.fraction > 0.0) {
            return Err(format!("poll_hint.fraction must be positive, got {}", self.fraction));
        }
        if self.min > self.max {
            return Err(format!("poll_hint.min ({:?}) exceeds poll_hint.max ({:?})", self.min, self.max));
        }
        if self.max > limit || self.unknown > limit {
            return Err(format!(
                "poll_hint.max ({:?}) and poll_hint.unknown ({:?}) must fit in half the orphan window ({:?}): \
                 a client honouring the hint would be reaped as an orphan; lower them to {:?} or less, \
                 or widen the orphan window to at least {:?}",
                self.max,
                self.unknown,
                orphan_window,
                limit,
                self.max.max(self.unknown).saturating_mul(2)
            ));
        }
        Ok(())
    }
}

/// The expected duration drawn from recent completed durations (ms): their median.
pub fn expected_from_history(durations_ms: &[i64]) -> Option<Duration> {
    if durations_ms.is_empty() {
        return None;
    }
    let mut v: Vec<i64> = durations_ms.iter().map(|d| (*d).max(0)).collect();
    v.sort_unstable();
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] as f64 } else { (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0 };
    Some(Duration::from_secs_f64(median / 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_follows_duration_within_bounds() {
        let p = HintPolicy::default();
        assert_eq!(p.hint_for(Some(Duration::from_secs(60))), Duration::from_millis(1200));
        assert_eq!(p.hint_for(Some(Duration::from_secs(1800))), Duration::from_secs(36));
        assert_eq!(p.hint_for(Some(Duration::from_secs(1))), Duration::from_millis(250));
        assert_eq!(p.hint_for(Some(Duration::from_secs(100_000))), Duration::from_secs(60));
        assert_eq!(p.hint_for(None), Duration::from_secs(1));
    }

    #[test]
    fn validation_refuses_a_hint_beyond_the_orphan_window() {
        let p = HintPolicy::default();
        assert!(p.validate(Duration::from_secs(900)).is_ok());
        let err = p.validate(Duration::from_secs(100)).unwrap_err();
        assert!(err.contains("orphan window"), "{err}");
    }

    #[test]
    fn a_huge_fraction_saturates_at_the_ceiling_instead_of_panicking() {
        let p = HintPolicy { fraction: 1e300, ..HintPolicy::default() };
        assert!(p.validate(Duration::from_secs(900)).is_ok());
        assert_eq!(p.hint_for(Some(Duration::from_secs(1))), p.max);
    }

    #[test]
    fn history_median() {
        assert_eq!(expected_from_history(&[]), None);
        assert_eq!(expected_from_history(&[3000, 1000, 2000]), Some(Duration::from_secs(2)));
        assert_eq!(expected_from_history(&[1000, 2000]), Some(Duration::from_millis(1500)));
    }
}
