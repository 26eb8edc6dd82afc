//! The client's poll schedule (paper §5.3, §6.4): multiplicative backoff with
//! half-range jitter; the server's `pollIntervalMs` is a floor, never a
//! ceiling; and the server's advertised orphan window caps the gap, so a
//! correct client is never orphaned by a correct server.
//!
//! ```
//! use mcp_tasks_core::{PollPolicy, PollScheduler, PyRandom};
//!
//! let policy = PollPolicy { jitter: false, ..PollPolicy::default() };
//! let mut s = PollScheduler::new(policy, PyRandom::new(0));
//! // 250 ms, then ×1.6 per poll: the client's own backoff.
//! assert_eq!(s.next_delay_ms(None), 250.0);
//! assert_eq!(s.next_delay_ms(None), 400.0);
//! // The server's hint is a floor: never a speed-up.
//! assert_eq!(s.next_delay_ms(Some(2_000.0)), 2_000.0);
//! // Half the advertised orphan window caps every delay.
//! s.set_orphan_window_ms(Some(3_000.0));
//! assert_eq!(s.next_delay_ms(None), 1_500.0);
//! // A hint-paced client takes the hint as its pace, under the same cap.
//! assert_eq!(s.paced_delay_ms(1_200.0), 1_200.0);
//! assert_eq!(s.paced_delay_ms(36_000.0), 1_500.0);
//! ```

use serde::{Deserialize, Serialize};

use crate::random::RandomSource;

/// Default first delay, ms.
pub const DEFAULT_INITIAL_MS: f64 = 250.0;
/// Default largest delay, ms.
pub const DEFAULT_MAX_MS: f64 = 10_000.0;
/// Default growth per poll.
pub const DEFAULT_POLL_MULTIPLIER: f64 = 1.6;
/// The share of the server's orphan window a client lets pass between polls
/// at most: half, leaving the other half for the server's batched poll
/// timestamps, its sweep period and the network.
pub const ORPHAN_WINDOW_SHARE: f64 = 0.5;

/// How a client spaces its polls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PollPolicy {
    /// First delay, ms.
    pub initial_ms: f64,
    /// Largest delay the client chooses on its own, ms.
    pub max_ms: f64,
    /// Growth per poll.
    pub multiplier: f64,
    /// Whether to jitter each delay uniformly in `[d/2, d]`.
    pub jitter: bool,
}

impl Default for PollPolicy {
    fn default() -> Self {
        PollPolicy {
            initial_ms: DEFAULT_INITIAL_MS,
            max_ms: DEFAULT_MAX_MS,
            multiplier: DEFAULT_POLL_MULTIPLIER,
            jitter: true,
        }
    }
}

/// One task's poll schedule: owns its backoff state and its random source.
///
/// ```
/// use mcp_tasks_core::{PollPolicy, PollScheduler, PyRandom};
///
/// let mut s = PollScheduler::new(PollPolicy::default(), PyRandom::new(7));
/// // Jittered in [d/2, d] around 250 ms, 400 ms, 640 ms, …, reproducibly for a seed.
/// let delays: Vec<f64> = (0..3).map(|_| s.next_delay_ms(None)).collect();
/// assert!((125.0..=250.0).contains(&delays[0]) && (200.0..=400.0).contains(&delays[1]));
/// let mut again = PollScheduler::new(PollPolicy::default(), PyRandom::new(7));
/// assert_eq!(delays, (0..3).map(|_| again.next_delay_ms(None)).collect::<Vec<_>>());
/// ```
#[derive(Debug)]
pub struct PollScheduler<R: RandomSource> {
    policy: PollPolicy,
    current_ms: f64,
    ceiling_ms: Option<f64>,
    rng: R,
}

impl<R: RandomSource> PollScheduler<R> {
    /// A fresh schedule.
    pub fn new(policy: PollPolicy, rng: R) -> Self {
        let current_ms = policy.initial_ms;
        PollScheduler { policy, current_ms, ceiling_ms: None, rng }
    }

    /// Caps every future delay under the server's advertised orphan window
    /// (or, lacking one, its `ttlMs`): at most [`ORPHAN_WINDOW_SHARE`] of it.
    pub fn set_orphan_window_ms(&mut self, window_ms: Option<f64>) {
        self.ceiling_ms = window_ms.filter(|w| w.is_finite() && *w > 0.0).map(|w| w * ORPHAN_WINDOW_SHARE);
    }

    /// The cap the orphan window imposes, if one is known.
    pub fn ceiling_ms(&self) -> Option<f64> {
        self.ceiling_ms
    }

    /// The next delay in ms, given the server's latest `pollIntervalMs`.
    ///
    /// 1. the hint is a floor: `current = max(current, hint)`;
    /// 2. `d = min(current, max_ms)`, and under the orphan-window ceiling;
    /// 3. with jitter, `d = uniform(d/2, d)`;
    /// 4. `current = min(current · multiplier, max_ms)`.
    pub fn next_delay_ms(&mut self, hint_ms: Option<f64>) -> f64 {
        if let Some(hint) = hint_ms.filter(|h| h.is_finite()) {
            self.current_ms = self.current_ms.max(hint);
        }
        let mut d = self.current_ms.min(self.policy.max_ms);
        if let Some(ceiling) = self.ceiling_ms {
            d = d.min(ceiling);
        }
        if self.policy.jitter {
            d = self.rng.uniform(0.5 * d, d);
        }
        self.current_ms = (self.current_ms * self.policy.multiplier).min(self.policy.max_ms);
        d
    }

    /// A delay at a pace set from outside (a hint-paced client's server
    /// hint), leaving the backoff state alone: `d = min(pace, ceiling)`,
    /// then with jitter `d = uniform(d/2, d)`. The same draw the backoff
    /// makes once it has settled at `pace` (initial = max = pace).
    pub fn paced_delay_ms(&mut self, pace_ms: f64) -> f64 {
        let mut d = pace_ms;
        if let Some(ceiling) = self.ceiling_ms {
            d = d.min(ceiling);
        }
        if self.policy.jitter {
            d = self.rng.uniform(0.5 * d, d);
        }
        d
    }

    /// The policy in force.
    pub fn policy(&self) -> &PollPolicy {
        &self.policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::PyRandom;
    use proptest::prelude::*;

    #[test]
    fn paper_vectors_seed_0_default_policy() {
        let mut s = PollScheduler::new(PollPolicy::default(), PyRandom::new(0));
        let got: Vec<f64> = (0..5).map(|_| s.next_delay_ms(None)).collect();
        assert_eq!(got, [230.55273144063102, 351.5908805880605, 454.58290586587043, 644.5653761499973, 1238.0362517451642]);
    }

    #[test]
    fn paper_vectors_seed_7_max_300s() {
        let policy = PollPolicy { max_ms: 300_000.0, ..PollPolicy::default() };
        let mut s = PollScheduler::new(policy, PyRandom::new(7));
        let want = [
            165.5, 230.2, 528.3, 549.1, 1258.2, 1790.0, 2218.8, 5058.1, 5570.0, 12314.9, 14704.0, 23985.0, 50120.8,
            102842.6, 101223.1, 176287.3,
        ];
        for w in want {
            let d = s.next_delay_ms(None);
            assert_eq!(format!("{d:.1}"), format!("{w:.1}"));
        }
    }

    #[test]
    fn hint_is_a_floor_not_a_ceiling() {
        let policy = PollPolicy { jitter: false, ..PollPolicy::default() };
        let mut s = PollScheduler::new(policy, PyRandom::new(0));
        assert_eq!(s.next_delay_ms(Some(2_000.0)), 2_000.0);
        // A smaller hint later cannot speed a backed-off client up.
        assert_eq!(s.next_delay_ms(Some(100.0)), 3_200.0);
    }

    #[test]
    fn a_paced_delay_is_the_settled_backoff_at_that_pace() {
        // The schedule a client gets with initial = max = pace draws the same delays.
        let settled = PollPolicy { initial_ms: 1_200.0, max_ms: 1_200.0, ..PollPolicy::default() };
        let mut bare = PollScheduler::new(settled, PyRandom::new(3));
        bare.set_orphan_window_ms(Some(2_000.0));
        let mut paced = PollScheduler::new(PollPolicy::default(), PyRandom::new(3));
        paced.set_orphan_window_ms(Some(2_000.0));
        for _ in 0..20 {
            let d = paced.paced_delay_ms(1_200.0);
            assert_eq!(d, bare.next_delay_ms(Some(1_200.0)));
            assert!((500.0..=1_000.0).contains(&d), "{d}");
        }
    }

    proptest! {
        #[test]
        fn never_exceeds_the_orphan_ceiling(seed in any::<u64>(), max_ms in 1_000f64..1_000_000.0,
                                            window_ms in 1_000f64..1_000_000.0, hint in proptest::option::of(0f64..2_000_000.0)) {
            let policy = PollPolicy { max_ms, ..PollPolicy::default() };
            let mut s = PollScheduler::new(policy, PyRandom::new(seed));
            s.set_orphan_window_ms(Some(window_ms));
            for _ in 0..50 {
                let d = s.next_delay_ms(hint);
                prop_assert!(d < window_ms);
                prop_assert!(d <= max_ms.max(DEFAULT_INITIAL_MS));
            }
        }
    }
}
