//! The mcp-tasks client: calls MCP tools as durable tasks (protocol
//! 2026-07-28, extension `io.modelcontextprotocol/tasks`) and follows them to
//! their results.
//!
//! - [`TasksClient`] speaks to one server over Streamable HTTP with rmcp,
//!   declaring the tasks extension on every request. [`TasksClient::follow`]
//!   polls `tasks/get` on the core [`PollScheduler`](mcp_tasks_core::PollScheduler)
//!   schedule (see [`PollPacer`]), answers `inputRequests` through an
//!   [`InputResponder`] once per key ([`InputLedger`]), reports progress to a
//!   [`TaskObserver`], and reconnects after transport failures.
//! - [`HandleBook`] is a small SQLite file of task handles, so a restarted
//!   client resumes what it was waiting for ([`TasksClient::resume`]).

mod book;
mod client;
mod error;
mod events;
mod failure;
mod input;
mod ledger;
mod outcome;
mod pacer;

pub use book::{BOOK_ENV, HandleBook, HandleRecord, Resolution};
pub use client::{
    ClientOptions, DEFAULT_GIVE_UP_AFTER, DEFAULT_MAX_INPUT_ROUNDS, Started, TaskHandle, TasksClient,
    client_capabilities, core_status,
};
pub use error::{BookError, ClientError};
pub use events::{Silent, TaskEvent, TaskObserver};
pub use failure::TransportFailure;
pub use input::{DeclineAll, FnResponder, InputPrompt, InputResponder, elicit_accept, elicit_cancel, elicit_decline};
pub use ledger::InputLedger;
pub use outcome::TaskOutcome;
pub use pacer::{ORPHAN_WINDOW_META_KEY, PollPacer, ServerHints};
pub use rmcp;
/// The attribute [`InputResponder`] implementations use (re-exported so callers need no extra dependency).
pub use async_trait::async_trait;
