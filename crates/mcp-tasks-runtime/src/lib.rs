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
//!
//! ```
//! use std::sync::Arc;
//! use mcp_tasks_runtime::{async_trait, CreateTask, Runtime, TaskContext, TaskTool, ToolFailure, ToolSpec};
//! use serde_json::{json, Value};
//!
//! struct Report;
//!
//! #[async_trait]
//! impl TaskTool for Report {
//!     fn spec(&self) -> ToolSpec {
//!         ToolSpec::new("report", "builds a report")
//!     }
//!     async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
//!         ctx.set_status_message("gathering data").await.map_err(|e| ToolFailure::permanent(e.to_string()))?;
//!         Ok(json!({"content": [{"type": "text", "text": "done"}]}))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(mcp_tasks_store::MemoryStore::new());
//! let runtime = Runtime::builder(store).tool(Arc::new(Report)).build()?;
//! // A server calls `runtime.start()` (triage, then executor, reaper and poll
//! // flusher on timers); tests and the study drive the same passes by hand:
//! let task = runtime.create_task(CreateTask::new("report", json!({}))).await?;
//! runtime.run_due_once().await?; // claim and spawn handlers
//! runtime.idle().await;          // every handler returned and settled
//! let view = runtime.get_task(&task.record.id, None).await?;
//! assert_eq!(view.record.status, mcp_tasks_core::TaskStatus::Completed);
//! runtime.shutdown(std::time::Duration::from_secs(5)).await;
//! # Ok(())
//! # }
//! ```

mod answers;
mod background;
mod builder;
mod cas;
mod claim_backoff;
mod context;
mod dead_letters;
mod error;
mod executor;
mod failure_from;
mod hints;
mod leader;
mod lease;
mod maintenance;
mod measured_store;
pub mod metrics;
mod poll_flusher;
mod reaper;
mod registry;
mod running;
mod runtime;
mod schema;
mod store_events;
mod tool;
pub mod trace_context;
mod transitions;
mod triage;
mod view;
mod wakeups;

/// Re-exported so tools can implement [`TaskTool`] without naming the crate.
pub use async_trait::async_trait;
pub use builder::{DEFAULT_CLAIM_INTERVAL, DEFAULT_CONCURRENCY, DEFAULT_MAX_WAITING, DEFAULT_QUOTA, RuntimeBuilder};
pub use context::{INPUT_RECHECK, TaskContext};
pub use dead_letters::DeadLetters;
pub use error::{Cancelled, RuntimeError};
pub use hints::{HISTORY_REFRESH, HISTORY_SAMPLE};
pub use leader::DEFAULT_LEADER_LEASE;
pub use metrics::Metrics;
pub use reaper::{MAX_BATCHES_PER_SWEEP, PlannedReap, ReapReport, SWEEP_BATCH};
pub use runtime::Runtime;
pub use schema::{CompiledSchema, MAX_REPORTED_VIOLATIONS, SchemaViolation};
pub use tool::{Execution, FailureKind, TaskTool, ToolFailure, ToolSpec};
pub use triage::{TriageReport, TriageScope};
pub use view::{CreateTask, TaskView};
