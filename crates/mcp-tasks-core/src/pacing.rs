//! How a client paces its polls from what the server tells it: the two
//! modes the study compares (paper §6.2 and E5), over one [`PollScheduler`].
//!
//! - [`PacingMode::HintPaced`] (the default): the server's `pollIntervalMs`
//!   *is* the pace — every delay is drawn uniformly in `[h/2, h]` — capped
//!   under half the advertised orphan window. A server that knows the task's
//!   expected duration thereby puts every client in the same regime (E5: 67
//!   polls and 0.8 % staleness at every duration). Until the server gives a
//!   hint, the client's own backoff applies.
//! - [`PacingMode::HintAsFloor`]: the paper's client. Its own multiplicative
//!   backoff (up to `max_ms`), the hint only a floor, under the same cap.
//!
//! ```
//! use mcp_tasks_core::pacing::{Pacer, PacingMode, ServerHints};
//! use mcp_tasks_core::{PollPolicy, PyRandom};
//!
//! let hints = ServerHints { poll_interval_ms: Some(1_200), orphan_window_ms: Some(900_000), ttl_ms: None };
//! let mut paced = Pacer::new(PacingMode::HintPaced, PollPolicy::default(), PyRandom::new(0));
//! paced.observe(hints);
//! let d = paced.next_delay_ms();
//! assert!((600.0..=1_200.0).contains(&d), "{d}");
//!
//! let mut floor = Pacer::new(PacingMode::HintAsFloor, PollPolicy { jitter: false, ..PollPolicy::default() }, PyRandom::new(0));
//! floor.observe(hints);
//! assert_eq!(floor.next_delay_ms(), 1_200.0); // the floor, then the client's own backoff
//! assert_eq!(floor.next_delay_ms(), 1_920.0);
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::poll::{PollPolicy, PollScheduler};
use crate::random::RandomSource;

/// How a client lets the server's hint set its pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PacingMode {
    /// The hint is the pace (jittered in `[h/2, h]`), capped under half the
    /// orphan window; the client's own backoff only while no hint is known.
    #[default]
    HintPaced,
    /// The client's own backoff; the hint is only a floor.
    HintAsFloor,
}

impl PacingMode {
    /// The name `mcp-tasks call --pacing` takes: `hint` or `floor`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PacingMode::HintPaced => "hint",
            PacingMode::HintAsFloor => "floor",
        }
    }
}

impl fmt::Display for PacingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pacing name that is neither `hint` nor `floor`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown pacing {0:?} (expected hint or floor)")]
pub struct UnknownPacing(pub String);

impl FromStr for PacingMode {
    type Err = UnknownPacing;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "hint" => Ok(PacingMode::HintPaced),
            "floor" => Ok(PacingMode::HintAsFloor),
            other => Err(UnknownPacing(other.to_owned())),
        }
    }
}

/// The numbers a server advertises about one task, from one of its answers
/// (`pollIntervalMs`, `ttlMs` and the vendor orphan window in `_meta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ServerHints {
    /// `pollIntervalMs`, if given.
    pub poll_interval_ms: Option<u64>,
    /// `ttlMs`; `None` is unlimited.
    pub ttl_ms: Option<u64>,
    /// The advertised orphan window, ms, if the server advertises one.
    pub orphan_window_ms: Option<u64>,
}

impl ServerHints {
    /// The window that caps the poll gap: the orphan window if advertised, else `ttlMs`.
    pub fn ceiling_window_ms(&self) -> Option<u64> {
        self.orphan_window_ms.filter(|w| *w > 0).or(self.ttl_ms.filter(|t| *t > 0))
    }

    /// `newer` over `self`: a hint the server omits this time keeps its last
    /// known value (the values MAY change, but a missing one is not a retraction).
    pub fn updated_by(self, newer: ServerHints) -> ServerHints {
        ServerHints {
            poll_interval_ms: newer.poll_interval_ms.or(self.poll_interval_ms),
            ttl_ms: newer.ttl_ms.or(self.ttl_ms),
            orphan_window_ms: newer.orphan_window_ms.or(self.orphan_window_ms),
        }
    }
}

/// One task's pacing: a [`PollScheduler`] fed with the server's latest hints
/// in a [`PacingMode`].
#[derive(Debug)]
pub struct Pacer<R: RandomSource> {
    mode: PacingMode,
    scheduler: PollScheduler<R>,
    hints: ServerHints,
}

impl<R: RandomSource> Pacer<R> {
    /// A fresh pacer: `mode`, the client's own `policy`, and its jitter source.
    pub fn new(mode: PacingMode, policy: PollPolicy, rng: R) -> Self {
        Pacer { mode, scheduler: PollScheduler::new(policy, rng), hints: ServerHints::default() }
    }

    /// Takes in the hints from the server's latest answer (see [`ServerHints::updated_by`]).
    pub fn observe(&mut self, hints: ServerHints) {
        let merged = self.hints.updated_by(hints);
        if merged.ceiling_window_ms() != self.hints.ceiling_window_ms() {
            self.scheduler.set_orphan_window_ms(merged.ceiling_window_ms().map(|w| w as f64));
        }
        self.hints = merged;
    }

    /// The mode.
    pub fn mode(&self) -> PacingMode {
        self.mode
    }

    /// The hints in force.
    pub fn hints(&self) -> ServerHints {
        self.hints
    }

    /// The cap the ceiling window imposes, ms, if one is known.
    pub fn ceiling_ms(&self) -> Option<f64> {
        self.scheduler.ceiling_ms()
    }

    /// How long to wait before the next `tasks/get`, ms.
    ///
    /// Hint-paced with a hint `h`: `max(h, initial_ms)` is the pace (a hint
    /// below the client's own first delay is raised to it, so a zero hint
    /// cannot make it spin). Otherwise the client's own backoff, with `h` as
    /// the floor. Both under half the ceiling window.
    pub fn next_delay_ms(&mut self) -> f64 {
        let hint = self.hints.poll_interval_ms.map(|ms| ms as f64);
        match (self.mode, hint) {
            (PacingMode::HintPaced, Some(h)) => {
                let pace = h.max(self.scheduler.policy().initial_ms);
                self.scheduler.paced_delay_ms(pace)
            }
            _ => self.scheduler.next_delay_ms(hint),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::PyRandom;

    fn hints(poll: Option<u64>, window: Option<u64>) -> ServerHints {
        ServerHints { poll_interval_ms: poll, ttl_ms: None, orphan_window_ms: window }
    }

    #[test]
    fn hint_paced_draws_the_studys_hint_paced_schedule() {
        // E5's hint-paced client: initial = max = hint, capped under half the window.
        let settled = PollPolicy { initial_ms: 36_000.0, max_ms: 36_000.0, ..PollPolicy::default() };
        let mut bare = PollScheduler::new(settled, PyRandom::new(5));
        bare.set_orphan_window_ms(Some(900_000.0));
        let mut pacer = Pacer::new(PacingMode::HintPaced, PollPolicy::default(), PyRandom::new(5));
        pacer.observe(hints(Some(36_000), Some(900_000)));
        for _ in 0..30 {
            assert_eq!(pacer.next_delay_ms(), bare.next_delay_ms(Some(36_000.0)));
        }
    }

    #[test]
    fn hint_paced_ignores_the_clients_own_ceiling_but_not_half_the_window() {
        let own = PollPolicy { max_ms: 1_000.0, jitter: false, ..PollPolicy::default() };
        let mut pacer = Pacer::new(PacingMode::HintPaced, own, PyRandom::new(0));
        pacer.observe(hints(Some(5_000), Some(60_000)));
        assert_eq!(pacer.next_delay_ms(), 5_000.0);
        pacer.observe(hints(None, Some(6_000)));
        assert_eq!(pacer.next_delay_ms(), 3_000.0, "half the window caps the pace");
    }

    #[test]
    fn hint_paced_without_a_hint_backs_off_on_its_own() {
        let own = PollPolicy { jitter: false, ..PollPolicy::default() };
        let mut pacer = Pacer::new(PacingMode::HintPaced, own, PyRandom::new(0));
        assert_eq!([pacer.next_delay_ms(), pacer.next_delay_ms()], [250.0, 400.0]);
        // A zero hint is raised to the client's first delay: no spinning.
        pacer.observe(hints(Some(0), None));
        assert_eq!(pacer.next_delay_ms(), 250.0);
    }

    #[test]
    fn floor_mode_is_the_papers_client() {
        let own = PollPolicy { jitter: false, ..PollPolicy::default() };
        let mut pacer = Pacer::new(PacingMode::HintAsFloor, own, PyRandom::new(0));
        pacer.observe(hints(Some(2_000), None));
        assert_eq!([pacer.next_delay_ms(), pacer.next_delay_ms()], [2_000.0, 3_200.0]);
    }

    #[test]
    fn pacing_names_round_trip() {
        for m in [PacingMode::HintPaced, PacingMode::HintAsFloor] {
            assert_eq!(m.as_str().parse::<PacingMode>().unwrap(), m);
        }
        assert!("fast".parse::<PacingMode>().unwrap_err().to_string().contains("hint or floor"));
        assert_eq!(PacingMode::default(), PacingMode::HintPaced);
    }
}
