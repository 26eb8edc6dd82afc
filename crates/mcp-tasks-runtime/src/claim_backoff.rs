//! The executor's pause while the store is unreachable: claims fail anyway,
//! so it stops trying at its claim interval and backs off (doubling, capped),
//! logging the outage once when it starts and once when it ends rather than
//! at every attempt.

use std::time::Duration;

/// Longest pause between claim attempts while the store fails.
pub(crate) const MAX_CLAIM_BACKOFF: Duration = Duration::from_secs(5);

/// Consecutive failed claims and the pause they call for.
#[derive(Debug, Default)]
pub(crate) struct ClaimBackoff {
    failures: u32,
}

impl ClaimBackoff {
    /// A claim succeeded: back to the claim interval; logs a recovery.
    pub(crate) fn succeeded(&mut self) {
        if self.failures > 0 {
            tracing::info!(failed_attempts = self.failures, "the store answers again: the executor claims work again");
        }
        self.failures = 0;
    }

    /// A claim failed: the pause before the next attempt (`interval`
    /// doubled per consecutive failure, at most [`MAX_CLAIM_BACKOFF`], never
    /// less than `interval`). Logs the first failure of a run only.
    pub(crate) fn failed(&mut self, error: &dyn std::fmt::Display, interval: Duration) -> Duration {
        if self.failures == 0 {
            tracing::warn!(error = %error, "executor cannot claim work: it stops claiming and retries with backoff");
        } else {
            tracing::debug!(error = %error, attempt = self.failures + 1, "executor still cannot claim work");
        }
        self.failures = self.failures.saturating_add(1);
        let doubled = interval.saturating_mul(1 << self.failures.min(16));
        doubled.min(MAX_CLAIM_BACKOFF).max(interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_to_the_cap_and_a_success_resets() {
        let mut b = ClaimBackoff::default();
        let every = Duration::from_millis(200);
        let pauses: Vec<Duration> = (0..6).map(|_| b.failed(&"down", every)).collect();
        let ms: Vec<u128> = pauses.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [400, 800, 1600, 3200, 5000, 5000]);
        b.succeeded();
        assert_eq!(b.failed(&"down", every), Duration::from_millis(400), "a new outage starts over");
    }

    #[test]
    fn an_interval_beyond_the_cap_is_kept() {
        let mut b = ClaimBackoff::default();
        assert_eq!(b.failed(&"down", Duration::from_secs(60)), Duration::from_secs(60));
    }
}
