//! When a `tools/call` whose answer was lost may be sent again, and how long
//! to wait between sends.
//!
//! A load balancer answers 502 when the instance holding a call dies before
//! answering; the call may or may not have created its task. An mcp-tasks
//! server lists, in an experimental capability, the tools whose calls carry
//! an idempotency key it honours: sending the same keyed call again returns
//! the task the first send created, or creates it once. Any other tool's call
//! is not resent, since it may already have run.

use std::time::Duration;

/// The first wait before resending a call whose answer was lost.
pub const FIRST_RESEND_DELAY: Duration = Duration::from_millis(100);
/// The longest wait between two sends of the same call.
pub const MAX_RESEND_DELAY: Duration = Duration::from_secs(2);

/// The waits between sends of one call: doubling from
/// [`FIRST_RESEND_DELAY`] up to [`MAX_RESEND_DELAY`], for as long as the
/// caller's give-up bound allows.
#[derive(Debug, Clone)]
pub(crate) struct ResendSchedule {
    next: Duration,
    left: Duration,
}

impl ResendSchedule {
    /// A schedule that stops once `give_up_after` has been spent waiting.
    pub(crate) fn new(give_up_after: Duration) -> Self {
        ResendSchedule { next: FIRST_RESEND_DELAY, left: give_up_after }
    }

    /// The wait before the next send, or `None` once the bound is spent.
    pub(crate) fn next_delay(&mut self) -> Option<Duration> {
        if self.left.is_zero() {
            return None;
        }
        let delay = self.next.min(self.left);
        self.left -= delay;
        self.next = (self.next * 2).min(MAX_RESEND_DELAY);
        Some(delay)
    }
}

/// A fresh idempotency key for one call (all its input rounds and resends).
pub(crate) fn new_idempotency_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_the_cap_and_stop_at_the_bound() {
        let mut s = ResendSchedule::new(Duration::from_secs(5));
        let waits: Vec<u64> = std::iter::from_fn(|| s.next_delay()).map(|d| d.as_millis() as u64).collect();
        assert_eq!(waits, vec![100, 200, 400, 800, 1600, 1900]);
        assert_eq!(waits.iter().sum::<u64>(), 5000);
    }

    #[test]
    fn a_zero_bound_never_resends() {
        assert_eq!(ResendSchedule::new(Duration::ZERO).next_delay(), None);
    }

    #[test]
    fn keys_are_unique() {
        assert_ne!(new_idempotency_key(), new_idempotency_key());
    }
}
