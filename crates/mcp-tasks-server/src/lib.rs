//! An MCP server (Streamable HTTP, protocol 2026-07-28, stateless) whose
//! long-running tools run as durable, policy-governed tasks.
//!
//! The wire layer is the official Rust SDK `rmcp`; the durability, retries,
//! reaping and triage are [`mcp_tasks_runtime::Runtime`]'s. This crate maps
//! one onto the other:
//!
//! - `tools/call` from a client that declares the tasks extension becomes a
//!   durable task (`Runtime::create_task`) and the client gets a
//!   `CreateTaskResult`; a client that did not declare it gets the result
//!   inline (task-optional tools) or `-32021` (task-required tools).
//! - `tasks/get`, `tasks/update` and `tasks/cancel` read and act on the store.
//! - A front layer ([`guard`]) answers what rmcp alone would answer wrongly:
//!   malformed JSON (`-32700`), invalid envelopes (`-32600`), wrong-typed
//!   params such as a numeric `taskId` (`-32602`), oversized bodies (`413`),
//!   bodies beyond the in-flight budget (`503`), slow bodies (`408`) and
//!   missing credentials (`401`).
//! - [`TaskServer::serve`] bounds connections ([`limits::ConnectionLimits`]):
//!   header, body and idle timeouts and a connection limit.
//! - `GET /healthz` and `GET /readyz` ([`health`]) are the probes;
//!   `GET /metrics` ([`metrics`]) is Prometheus's scrape. None of them needs
//!   a bearer token.
//! - `tasks/get` may be limited per principal ([`rate_limit`]): HTTP 429,
//!   `-32051`.
//!
//! [`tools::support`] holds small helpers for tool authors. The `tool-sets`
//! feature adds the `demo`, `conformance` and `fleet` tool sets
//! (`tools::ToolSet`) that `mcp-tasks serve --tools` offers; a server of
//! your own does not need it.
//!
//! **Already have an rmcp server?** Keep it: build a [`DurableTasks`] once
//! and return `tasks.wrap(MyServer::new())` (a [`Durable`]) from rmcp's
//! service factory. Durable tools are typed ([`TypedTool`], one builder line
//! each); your `#[tool_router]` tools, prompts and resources are untouched.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use mcp_tasks_server::{DurableTasks, TaskContext, ToolFailure};
//! # #[derive(Clone, Default)] struct MyServer;
//! # impl rmcp::ServerHandler for MyServer {}
//! #[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
//! struct Args { topic: String }
//!
//! async fn report(args: Args, ctx: TaskContext) -> Result<String, ToolFailure> {
//!     ctx.sleep(std::time::Duration::from_secs(5)).await?;
//!     Ok(format!("a report on {}", args.topic))
//! }
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open("tasks.db")?);
//! let tasks = DurableTasks::builder(store).single_node(true).task("report", "Writes a report", report).build()?;
//! tasks.start().await?;
//! let factory = move || Ok::<_, std::io::Error>(tasks.wrap(MyServer::default()));
//! # Ok(()) }
//! ```
//!
//! **Starting from nothing?** The stand-alone [`TaskServer`] serves durable
//! tools behind a hardened HTTP endpoint in a few lines:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # async fn demo(my_tool: impl mcp_tasks_runtime::TaskTool) -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open("tasks.db")?);
//! let server = mcp_tasks_server::TaskServer::builder(store).tool(my_tool).build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server.serve(listener, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```

pub mod auth;
pub mod body_budget;
pub mod builder;
mod connection;
mod custom_handler;
pub mod durable;
mod durable_handler;
pub mod elicit;
mod errors;
pub mod fast_create;
pub mod fast_get;
mod fast_path;
pub mod fd_limit;
mod get_answer;
pub mod guard;
mod handler;
pub mod health;
mod idempotency_key;
pub mod inline;
pub mod input_capabilities;
pub mod limits;
pub mod list_cache;
pub mod log_limit;
pub mod metrics;
pub mod rate_limit;
pub mod request_state;
mod request_trace;
pub mod serve;
mod server_error;
mod shared_service;
pub mod tools;
pub mod typed;
pub mod wire;

pub use auth::{Principal, TokenMap};
pub use builder::{TaskServer, TaskServerBuilder};
pub use durable::{DurableTasks, DurableTasksBuilder};
pub use durable_handler::Durable;
pub use elicit::{Elicit, Elicited};
pub use errors::QUOTA_EXCEEDED;
pub use idempotency_key::MAX_IDEMPOTENCY_KEY_BYTES;
pub use inline::{InlineCall, InlineTool};
pub use limits::ConnectionLimits;
/// The request check the guard runs (in `mcp-tasks-wire`, so it can be fuzzed without a server).
pub use mcp_tasks_wire::envelope;
pub use metrics::ServerMetrics;
pub use rate_limit::POLL_RATE_LIMITED;
pub use request_state::{RequestStateError, RequestStateSeal};
pub use server_error::ServerError;
pub use typed::{IntoTaskResult, TypedTool};
pub use wire::{IDEMPOTENCY_KEY_META_KEY, ORPHAN_WINDOW_META_KEY};

/// Re-exported so a tool author needs only this crate and the runtime's tool seam.
pub use mcp_tasks_runtime::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
