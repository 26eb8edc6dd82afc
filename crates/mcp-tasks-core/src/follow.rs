//! Following a task to its end, as a sans-IO state machine: the decisions of
//! a client's `tasks/get` loop with the I/O taken out, the way quinn-proto's
//! `Connection` is driven with `now` passed in.
//!
//! The driver (the rmcp client over HTTP, or the study under a manual clock)
//! tells the machine what happened — "the server answered status S with
//! hints H at `now`", or "the request failed at `now`" — and does what it
//! answers: poll again at an instant, stop because the task is done, or give
//! up. Pacing comes from a [`Pacer`]; giving up is decided here, from the
//! failure's kind and how long the server has been unreachable.
//!
//! ```
//! use std::time::Duration;
//! use mcp_tasks_core::follow::{Follow, FollowConfig, FollowStep, GiveUp};
//! use mcp_tasks_core::pacing::ServerHints;
//! use mcp_tasks_core::{PyRandom, TaskStatus, Timestamp};
//!
//! let config = FollowConfig { give_up_after: Duration::from_secs(60), ..FollowConfig::default() };
//! let hints = ServerHints { poll_interval_ms: Some(1_200), ttl_ms: None, orphan_window_ms: Some(900_000) };
//! let mut follow = Follow::new(&config, PyRandom::new(0));
//! let t0 = Timestamp::from_secs(1_000);
//!
//! // Created: the first poll comes at the server's pace.
//! let FollowStep::Poll { at, delay_ms } = follow.start(t0, hints) else { unreachable!() };
//! assert!((600.0..=1_200.0).contains(&delay_ms) && at > t0);
//!
//! // Still working: poll again. Completed: done.
//! assert!(matches!(follow.on_answer(at, TaskStatus::Working, hints), FollowStep::Poll { .. }));
//! assert_eq!(follow.on_answer(at, TaskStatus::Completed, hints), FollowStep::Done { status: TaskStatus::Completed });
//!
//! // A transient failure is retried until the server has been unreachable
//! // for `give_up_after`; a failure retrying cannot fix ends it at once.
//! let mut follow = Follow::new(&config, PyRandom::new(0));
//! follow.start(t0, hints);
//! assert!(matches!(follow.on_failure(t0, true), FollowStep::Poll { .. }));
//! let later = t0.plus(Duration::from_secs(60));
//! assert!(matches!(follow.on_failure(later, true), FollowStep::GiveUp(GiveUp::Unreachable { .. })));
//! assert_eq!(follow.on_failure(later, false), FollowStep::GiveUp(GiveUp::NotTransient));
//! ```

use std::time::Duration;

use crate::pacing::{Pacer, PacingMode, ServerHints};
use crate::poll::PollPolicy;
use crate::random::RandomSource;
use crate::status::TaskStatus;
use crate::time::Timestamp;

/// Default time a follower keeps polling an unreachable server before giving up.
pub const DEFAULT_GIVE_UP_AFTER: Duration = Duration::from_secs(15 * 60);

/// How a client follows a task: its pacing and its patience.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowConfig {
    /// How the server's hint sets the pace.
    pub pacing: PacingMode,
    /// The client's own backoff (the whole schedule in the floor mode; the
    /// schedule until a hint arrives when hint-paced).
    pub poll: PollPolicy,
    /// How long to keep polling a server that does not answer.
    pub give_up_after: Duration,
}

impl Default for FollowConfig {
    /// The shipped client: hint-paced, the default poll policy, 15 minutes' patience.
    fn default() -> Self {
        FollowConfig { pacing: PacingMode::default(), poll: PollPolicy::default(), give_up_after: DEFAULT_GIVE_UP_AFTER }
    }
}

/// What the driver does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FollowStep {
    /// Send `tasks/get` at `at`, `delay_ms` after the `now` given.
    Poll {
        /// When to poll (to the millisecond).
        at: Timestamp,
        /// The exact delay, ms.
        delay_ms: f64,
    },
    /// The task reached a terminal status: stop polling.
    Done {
        /// The terminal status.
        status: TaskStatus,
    },
    /// Stop polling without an outcome.
    GiveUp(GiveUp),
}

impl FollowStep {
    /// The delay of a [`FollowStep::Poll`] as a [`Duration`].
    pub fn delay(&self) -> Option<Duration> {
        match self {
            FollowStep::Poll { delay_ms, .. } => Some(Duration::from_secs_f64(delay_ms.max(0.0) / 1000.0)),
            _ => None,
        }
    }
}

/// Why a follow stopped without an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// The server has failed every request since `since`, for `waited`
    /// (at least the configured patience).
    Unreachable {
        /// The first failure after the last answer.
        since: Timestamp,
        /// How long it kept failing.
        waited: Duration,
    },
    /// The failure is one that asking again cannot fix (a refused token, a
    /// wrong path): stop at once.
    NotTransient,
}

/// One task's follow loop, as decisions.
#[derive(Debug)]
pub struct Follow<R: RandomSource> {
    pacer: Pacer<R>,
    give_up_after: Duration,
    unreachable_since: Option<Timestamp>,
    last_status: Option<TaskStatus>,
    answers: u64,
}

impl<R: RandomSource> Follow<R> {
    /// A follow with `config`, drawing its jitter from `rng`.
    pub fn new(config: &FollowConfig, rng: R) -> Self {
        Follow {
            pacer: Pacer::new(config.pacing, config.poll.clone(), rng),
            give_up_after: config.give_up_after,
            unreachable_since: None,
            last_status: None,
            answers: 0,
        }
    }

    /// Begins with the hints the handle carries (those of the `tools/call`
    /// answer, or none for a resumed handle): the first poll. A task is
    /// always polled at least once, since only `tasks/get` carries its outcome.
    pub fn start(&mut self, now: Timestamp, hints: ServerHints) -> FollowStep {
        self.pacer.observe(hints);
        self.poll(now)
    }

    /// The server answered: a terminal status ends the follow, a live one
    /// schedules the next poll at the pace of the hints in force.
    pub fn on_answer(&mut self, now: Timestamp, status: TaskStatus, hints: ServerHints) -> FollowStep {
        self.unreachable_since = None;
        self.answers += 1;
        self.last_status = Some(status);
        self.pacer.observe(hints);
        if status.is_terminal() {
            return FollowStep::Done { status };
        }
        self.poll(now)
    }

    /// A request got no answer at `now`. A failure that is not `transient`
    /// ends the follow at once; a transient one is retried at the usual pace
    /// until the server has been unreachable for the configured patience.
    pub fn on_failure(&mut self, now: Timestamp, transient: bool) -> FollowStep {
        if !transient {
            return FollowStep::GiveUp(GiveUp::NotTransient);
        }
        let since = *self.unreachable_since.get_or_insert(now);
        let waited = now.since(since);
        if waited >= self.give_up_after {
            return FollowStep::GiveUp(GiveUp::Unreachable { since, waited });
        }
        self.poll(now)
    }

    /// The hints in force.
    pub fn hints(&self) -> ServerHints {
        self.pacer.hints()
    }

    /// The pacing mode.
    pub fn pacing(&self) -> PacingMode {
        self.pacer.mode()
    }

    /// The last status the server answered, if any.
    pub fn last_status(&self) -> Option<TaskStatus> {
        self.last_status
    }

    /// How many answers the server has given.
    pub fn answers(&self) -> u64 {
        self.answers
    }

    fn poll(&mut self, now: Timestamp) -> FollowStep {
        let delay_ms = self.pacer.next_delay_ms();
        FollowStep::Poll { at: now.plus(Duration::from_secs_f64(delay_ms.max(0.0) / 1000.0)), delay_ms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Clock;
    use crate::random::PyRandom;
    use crate::time::ManualClock;

    const HINTS: ServerHints = ServerHints { poll_interval_ms: Some(1_000), ttl_ms: None, orphan_window_ms: None };

    #[test]
    fn polls_until_terminal_under_a_manual_clock() {
        let clock = ManualClock::new(Timestamp::from_secs(10));
        let config = FollowConfig { poll: PollPolicy { jitter: false, ..PollPolicy::default() }, ..FollowConfig::default() };
        let mut f = Follow::new(&config, PyRandom::new(0));
        let mut step = f.start(clock.now(), HINTS);
        let mut polls = 0;
        let done_at = Timestamp::from_secs(15);
        loop {
            match step {
                FollowStep::Poll { at, delay_ms } => {
                    assert_eq!(delay_ms, 1_000.0);
                    clock.set(at);
                    polls += 1;
                    let status = if clock.now() >= done_at { TaskStatus::Completed } else { TaskStatus::Working };
                    step = f.on_answer(clock.now(), status, ServerHints::default());
                }
                FollowStep::Done { status } => {
                    assert_eq!(status, TaskStatus::Completed);
                    break;
                }
                FollowStep::GiveUp(g) => panic!("{g:?}"),
            }
        }
        assert_eq!(polls, 5);
        assert_eq!(f.answers(), 5);
        assert_eq!(f.hints().poll_interval_ms, Some(1_000), "an omitted hint keeps its value");
    }

    #[test]
    fn an_answer_resets_the_unreachable_clock() {
        let config = FollowConfig { give_up_after: Duration::from_secs(10), ..FollowConfig::default() };
        let mut f = Follow::new(&config, PyRandom::new(1));
        let t = |s| Timestamp::from_secs(s);
        f.start(t(0), HINTS);
        assert!(matches!(f.on_failure(t(1), true), FollowStep::Poll { .. }));
        assert!(matches!(f.on_failure(t(10), true), FollowStep::Poll { .. }));
        assert!(matches!(f.on_answer(t(12), TaskStatus::Working, HINTS), FollowStep::Poll { .. }));
        // Unreachable again from 13: nine seconds later is not yet ten.
        assert!(matches!(f.on_failure(t(13), true), FollowStep::Poll { .. }));
        assert!(matches!(f.on_failure(t(22), true), FollowStep::Poll { .. }));
        assert_eq!(
            f.on_failure(t(23), true),
            FollowStep::GiveUp(GiveUp::Unreachable { since: t(13), waited: Duration::from_secs(10) })
        );
    }

    #[test]
    fn a_failure_retrying_cannot_fix_stops_at_once() {
        let mut f = Follow::new(&FollowConfig::default(), PyRandom::new(1));
        f.start(Timestamp::from_secs(0), HINTS);
        assert_eq!(f.on_failure(Timestamp::from_secs(0), false), FollowStep::GiveUp(GiveUp::NotTransient));
    }

    #[test]
    fn the_default_is_hint_paced() {
        assert_eq!(FollowConfig::default().pacing, PacingMode::HintPaced);
        assert_eq!(FollowConfig::default().poll, PollPolicy::default());
    }
}
