//! The mcp-tasks runtime: runs tools as durable tasks over a
//! [`TaskStore`](mcp_tasks_store::TaskStore).
//!
//! - the **executor** claims due tasks, leases them, runs their handlers and
//!   writes each attempt's outcome (retry, complete, fail, dead-letter);
//! - the **reaper** fails timed-out tasks, cancels orphans and deletes
//!   expired ones;
//! - **triage** settles tasks whose executor died;
//! - client operations (create, get, cancel, answer input) and
//!   dead-letter operations.
//!
//! Every decision comes from `mcp-tasks-core`; every status change is a
//! guarded compare-and-set through `TaskStore::apply`, so a lost race
//! changes nothing. The runtime knows nothing of MCP's wire types.

mod background;
mod builder;
mod context;
mod dead_letters;
mod error;
mod executor;
mod hints;
mod reaper;
mod running;
mod runtime;
mod shared;
mod tool;
mod transitions;
mod triage;
mod view;
mod wakeups;

pub use builder::{DEFAULT_CLAIM_INTERVAL, DEFAULT_CONCURRENCY, RuntimeBuilder};
pub use context::{INPUT_RECHECK, TaskContext};
pub use dead_letters::DeadLetters;
pub use error::{Cancelled, RuntimeError};
pub use hints::{HISTORY_REFRESH, HISTORY_SAMPLE};
pub use reaper::{MAX_BATCHES_PER_SWEEP, ReapReport, SWEEP_BATCH};
pub use runtime::Runtime;
pub use tool::{Execution, FailureKind, TaskTool, ToolFailure, ToolSpec};
pub use triage::{TriageReport, TriageScope};
pub use view::{CreateTask, TaskView};
