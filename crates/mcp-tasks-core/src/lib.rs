//! The sans-IO policy core of mcp-tasks.
//!
//! Nothing in this crate does I/O, reads the system clock (except
//! [`time::SystemClock`], which callers pass in), or spawns. Every decision
//! takes `now` as an argument and returns a value; the runtime does the waiting.

pub mod status;
pub mod task;
pub mod time;

pub use status::{IllegalTransition, TaskStatus};
pub use task::{Lease, TaskError, TaskId, TaskRecord, call_fingerprint};
pub use time::{Clock, ManualClock, SystemClock, Timestamp};
