//! The sans-IO policy core of mcp-tasks.
//!
//! Nothing in this crate does I/O, reads the system clock (except
//! [`time::SystemClock`], which callers pass in), or spawns. Every decision
//! takes `now` as an argument and returns a value; the runtime does the waiting.
//! The one read of OS entropy is [`TaskId::random`], which mints ids and
//! decides nothing; random draws that decide (jitter) come from a
//! [`RandomSource`] the caller passes in. `tests/sans_io.rs` holds the line.
//!
//! The `testing` feature adds `testing`, record builders for tests; it is
//! not part of the stable API.

pub mod cancel;
pub mod classify;
pub mod config_check;
mod fingerprint;
pub mod follow;
pub mod hint;
pub mod input;
pub mod lease;
pub mod pacing;
pub mod policy;
pub mod poll;
pub mod random;
pub mod reaper;
pub mod retention;
pub mod retry;
mod rfc3339;
mod serde_duration;
pub mod status;
pub mod task;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
pub mod triage;

pub use cancel::{CancelDecision, decide_cancel};
pub use classify::{Classifier, ClassifierConfig, Failure, FailureClass};
pub use config_check::{ClientExpectations, Finding, Severity, check_config};
pub use fingerprint::call_fingerprint;
pub use follow::{Follow, FollowConfig, FollowStep, GiveUp};
pub use hint::HintPolicy;
pub use input::{AskDecision, merge_answers};
pub use lease::{AfterRenewal, LeaseTerms};
pub use pacing::{Pacer, PacingMode, ServerHints};
pub use policy::Policy;
pub use poll::{PollPolicy, PollScheduler};
pub use random::{PyRandom, RandomSource};
pub use reaper::{ReaperAction, Sweep, SweepContext};
pub use retention::{DEFAULT_POLL_SLACK_SHARE, LARGEST_POLL_SLACK_SHARE, RetentionPolicy};
pub use retry::{RetryDecision, RetryPolicy};
pub use status::{IllegalTransition, TaskStatus};
pub use task::{Lease, TaskError, TaskId, TaskRecord};
pub use time::{Clock, ManualClock, SystemClock, Timestamp};
pub use triage::{TriageDecision, triage};
