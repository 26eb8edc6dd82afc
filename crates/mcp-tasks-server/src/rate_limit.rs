//! The per-principal limit on `tasks/get` (the specification: servers
//! SHOULD rate-limit polls). [`governor`] counts (GCRA: a steady rate with a
//! burst of one second's worth), on the server's own clock, so a test with a
//! manual clock drives refusal and recovery without sleeping.
//!
//! A refused poll is answered HTTP 429 with `Retry-After` (whole seconds,
//! rounded up) and the JSON-RPC error [`POLL_RATE_LIMITED`], whose `data`
//! carries the limit and the wait in milliseconds. Callers without a bearer
//! token share one principal, so without auth the limit is the server's.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::Clock as GovernorClock;
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use mcp_tasks_core::Clock;

/// `-32051`: the caller's principal polls `tasks/get` faster than the
/// server's limit; retry after `data.retryAfterMs`. An implementation-defined
/// server error beside [`QUOTA_EXCEEDED`](crate::QUOTA_EXCEEDED) (`-32050`).
pub const POLL_RATE_LIMITED: i64 = -32051;

/// The server's clock as governor reads it: milliseconds since the epoch.
#[derive(Clone)]
pub(crate) struct ServerClock(pub(crate) Arc<dyn Clock>);

impl GovernorClock for ServerClock {
    type Instant = Duration;

    fn now(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.0.now().as_millis()).unwrap_or(0))
    }
}

type Limiter = RateLimiter<String, DefaultKeyedStateStore<String>, ServerClock, NoOpMiddleware<Duration>>;

/// Counts each principal's `tasks/get` against `per_second`.
#[derive(Clone)]
pub struct PollLimiter {
    limiter: Arc<Limiter>,
    per_second: NonZeroU32,
    clock: ServerClock,
}

impl std::fmt::Debug for PollLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollLimiter").field("per_second", &self.per_second).finish()
    }
}

/// A refused poll: how long until the next one is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

impl PollLimiter {
    /// A limit of `per_second` polls per principal, on `clock`.
    pub(crate) fn new(per_second: NonZeroU32, clock: Arc<dyn Clock>) -> Self {
        let clock = ServerClock(clock);
        let limiter = RateLimiter::new(Quota::per_second(per_second), DefaultKeyedStateStore::default(), clock.clone());
        PollLimiter { limiter: Arc::new(limiter), per_second, clock }
    }

    /// The configured polls per second per principal.
    pub fn per_second(&self) -> u32 {
        self.per_second.get()
    }

    /// Counts one poll by `principal` (`""`: anonymous).
    pub fn check(&self, principal: &str) -> Result<(), RetryAfter> {
        // Principals come and go: forget the ones whose bucket is full again,
        // now and then, so the map stays the size of the active ones.
        if self.limiter.len() > 1024 {
            self.limiter.retain_recent();
        }
        let key = principal.to_owned();
        self.limiter.check_key(&key).map_err(|not_until| RetryAfter(not_until.wait_time_from(self.clock.now())))
    }
}

impl RetryAfter {
    /// The `Retry-After` header's whole seconds, rounded up (at least 1).
    pub fn header_seconds(self) -> u64 {
        self.0.as_millis().div_ceil(1000).max(1) as u64
    }

    /// The wait in milliseconds, rounded up.
    pub fn millis(self) -> u64 {
        u64::try_from(self.0.as_micros().div_ceil(1000)).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use mcp_tasks_core::{ManualClock, Timestamp};

    use super::*;

    #[test]
    fn a_principal_beyond_its_rate_waits_and_others_do_not() {
        let clock = Arc::new(ManualClock::new(Timestamp::from_millis(1_000_000)));
        let limiter = PollLimiter::new(NonZeroU32::new(2).unwrap(), clock.clone());
        assert_eq!(limiter.check("alice"), Ok(()));
        assert_eq!(limiter.check("alice"), Ok(()));
        let refused = limiter.check("alice").unwrap_err();
        assert_eq!(refused.millis(), 500, "one poll per 500 ms at 2/s");
        assert_eq!(refused.header_seconds(), 1);
        assert_eq!(limiter.check("bob"), Ok(()), "each principal has its own count");
        clock.advance(Duration::from_millis(500));
        assert_eq!(limiter.check("alice"), Ok(()));
    }
}
