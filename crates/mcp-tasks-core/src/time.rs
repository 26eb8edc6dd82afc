//! Wall-clock instants as integer milliseconds, and the [`Clock`] seam.
//!
//! The core never reads the system clock: every decision takes `now` as an
//! argument. The runtime passes [`SystemClock`]; tests and the study pass a
//! [`ManualClock`] they advance by hand.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// An instant, in whole milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The instant `ms` milliseconds after the epoch.
    pub const fn from_millis(ms: i64) -> Self {
        Timestamp(ms)
    }

    /// The instant `s` whole seconds after the epoch.
    pub const fn from_secs(s: i64) -> Self {
        Timestamp(s * 1000)
    }

    /// Milliseconds since the epoch.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// This instant plus `d` (saturating; sub-millisecond parts are dropped).
    pub fn plus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_add(duration_millis(d)))
    }

    /// This instant minus `d` (saturating).
    pub fn minus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_sub(duration_millis(d)))
    }

    /// The time from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: Timestamp) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0).max(0) as u64)
    }
}

/// A duration as whole milliseconds, saturating at `i64::MAX`.
pub fn duration_millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The source of "now" for everything that decides by time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The real wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Timestamp(duration_millis(since))
    }
}

/// A clock that moves only when told to. Clones share one instant.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        ManualClock { now: Arc::new(AtomicI64::new(start.0)) }
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.now.fetch_add(duration_millis(d), Ordering::SeqCst);
    }

    /// Sets the clock to `t` (which may be earlier: tests of clock skew).
    pub fn set(&self, t: Timestamp) {
        self.now.store(t.0, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.now.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(Timestamp::from_secs(1_000_000));
        assert_eq!(c.now(), Timestamp::from_secs(1_000_000));
        c.advance(Duration::from_millis(1500));
        assert_eq!(c.now().as_millis(), 1_000_001_500);
        let shared = c.clone();
        shared.advance(Duration::from_secs(1));
        assert_eq!(c.now().as_millis(), 1_000_002_500);
    }

    #[test]
    fn since_is_never_negative() {
        let a = Timestamp::from_secs(10);
        let b = Timestamp::from_secs(5);
        assert_eq!(a.since(b), Duration::from_secs(5));
        assert_eq!(b.since(a), Duration::ZERO);
    }
}
