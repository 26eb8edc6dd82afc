//! Retry policy: capped exponential backoff with full jitter and a hard
//! attempt ceiling (paper §4.3). The delay is returned, never slept.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::classify::FailureClass;
use crate::random::RandomSource;

/// Default attempt ceiling (total attempts, not retries).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Default first backoff cap.
pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(500);
/// Default growth per attempt.
pub const DEFAULT_MULTIPLIER: f64 = 2.0;
/// Default largest backoff.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);

/// How failed attempts are retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// Total attempts allowed, the first included.
    pub max_attempts: u32,
    /// Backoff cap after the first attempt.
    #[serde(with = "crate::serde_duration")]
    pub base_delay: Duration,
    /// Growth of the cap per attempt.
    pub multiplier: f64,
    /// Largest cap.
    #[serde(with = "crate::serde_duration")]
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base_delay: DEFAULT_BASE_DELAY,
            multiplier: DEFAULT_MULTIPLIER,
            max_delay: DEFAULT_MAX_DELAY,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RetryDecision {
    /// Run again as `next_attempt`, no sooner than `delay` from now.
    Retry {
        /// The attempt number of the retry.
        next_attempt: u32,
        /// How long to wait first (advertised to the client, not slept).
        delay: Duration,
    },
    /// Stop: the task fails with this class (permanent or poison).
    GiveUp {
        /// Why it stops.
        class: FailureClass,
    },
}

impl RetryPolicy {
    /// The jitter range's upper end after attempt `attempt` (1-based):
    /// `min(base · multiplier^(attempt−1), max)`.
    pub fn delay_cap(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(1024) as i32;
        let secs = self.base_delay.as_secs_f64() * self.multiplier.powi(exp);
        let max = self.max_delay.as_secs_f64();
        Duration::from_secs_f64(if secs.is_finite() { secs.min(max) } else { max }.max(0.0))
    }

    /// A full-jitter delay after attempt `attempt`: uniform in `[0, cap]`.
    pub fn delay(&self, attempt: u32, rng: &mut dyn RandomSource) -> Duration {
        let cap = self.delay_cap(attempt).as_secs_f64();
        Duration::from_secs_f64(rng.uniform(0.0, cap).clamp(0.0, cap))
    }

    /// Decides after `attempt` failed with `class` (already ceiling-adjusted
    /// by the classifier). Retries only a transient failure below the ceiling.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_tasks_core::random::Scripted;
    /// use mcp_tasks_core::{FailureClass, RetryDecision, RetryPolicy};
    ///
    /// let policy = RetryPolicy::default(); // 3 attempts, 500 ms cap after the first, ×2
    /// let mut draws = Scripted::new(vec![0.5]); // the jitter draw, pinned
    /// assert_eq!(
    ///     policy.decide(FailureClass::Transient, 1, &mut draws),
    ///     RetryDecision::Retry { next_attempt: 2, delay: Duration::from_millis(250) },
    /// );
    /// // Out of attempts: a transient failure is poison (dead-lettered).
    /// assert_eq!(
    ///     policy.decide(FailureClass::Transient, 3, &mut draws),
    ///     RetryDecision::GiveUp { class: FailureClass::Poison },
    /// );
    /// // A permanent failure is never retried.
    /// assert_eq!(
    ///     policy.decide(FailureClass::Permanent, 1, &mut draws),
    ///     RetryDecision::GiveUp { class: FailureClass::Permanent },
    /// );
    /// ```
    pub fn decide(&self, class: FailureClass, attempt: u32, rng: &mut dyn RandomSource) -> RetryDecision {
        match class {
            FailureClass::Transient if attempt < self.max_attempts => {
                RetryDecision::Retry { next_attempt: attempt + 1, delay: self.delay(attempt, rng) }
            }
            FailureClass::Transient => RetryDecision::GiveUp { class: FailureClass::Poison },
            other => RetryDecision::GiveUp { class: other },
        }
    }

    /// Checks the policy makes sense, naming the field that does not.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_attempts == 0 {
            return Err("retry.max_attempts must be at least 1".into());
        }
        if !(self.multiplier.is_finite() && self.multiplier >= 1.0) {
            return Err(format!("retry.multiplier must be a number ≥ 1, got {}", self.multiplier));
        }
        if self.base_delay > self.max_delay {
            return Err(format!(
                "retry.base_delay ({:?}) must not exceed retry.max_delay ({:?})",
                self.base_delay, self.max_delay
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::{PyRandom, Scripted};
    use proptest::prelude::*;

    #[test]
    fn caps_grow_then_stop() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay_cap(1), Duration::from_millis(500));
        assert_eq!(p.delay_cap(2), Duration::from_secs(1));
        assert_eq!(p.delay_cap(3), Duration::from_secs(2));
        assert_eq!(p.delay_cap(10), Duration::from_secs(30));
        assert_eq!(p.delay_cap(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn full_jitter_uses_the_random_source() {
        let p = RetryPolicy::default();
        let mut r = Scripted::new(vec![0.5]);
        assert_eq!(p.delay(2, &mut r), Duration::from_millis(500));
    }

    #[test]
    fn decisions_follow_class_and_ceiling() {
        let p = RetryPolicy::default();
        let mut r = Scripted::new(vec![0.5]);
        assert_eq!(
            p.decide(FailureClass::Transient, 1, &mut r),
            RetryDecision::Retry { next_attempt: 2, delay: Duration::from_millis(250) }
        );
        assert_eq!(p.decide(FailureClass::Transient, 3, &mut r), RetryDecision::GiveUp { class: FailureClass::Poison });
        assert_eq!(p.decide(FailureClass::Permanent, 1, &mut r), RetryDecision::GiveUp { class: FailureClass::Permanent });
    }

    proptest! {
        #[test]
        fn every_delay_lies_in_zero_to_cap(seed in any::<u64>(), attempt in 1u32..64,
                                           base_ms in 1u64..5_000, max_ms in 5_000u64..120_000,
                                           mult in 1.0f64..4.0) {
            let p = RetryPolicy { max_attempts: 5, base_delay: Duration::from_millis(base_ms),
                                  multiplier: mult, max_delay: Duration::from_millis(max_ms) };
            let mut r = PyRandom::new(seed);
            let d = p.delay(attempt, &mut r);
            prop_assert!(d <= p.max_delay);
            prop_assert!(d <= p.delay_cap(attempt));
        }

        #[test]
        fn attempts_never_exceed_the_ceiling(seed in any::<u64>(), max in 1u32..10) {
            let p = RetryPolicy { max_attempts: max, ..RetryPolicy::default() };
            let mut r = PyRandom::new(seed);
            let mut attempt = 1;
            while let RetryDecision::Retry { next_attempt, .. } = p.decide(FailureClass::Transient, attempt, &mut r) {
                prop_assert!(next_attempt <= max);
                attempt = next_attempt;
            }
            prop_assert_eq!(attempt, max);
        }
    }
}
