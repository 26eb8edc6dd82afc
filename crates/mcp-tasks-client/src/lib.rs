//! The mcp-tasks client: calls MCP tools as durable tasks (protocol
//! 2026-07-28, extension `io.modelcontextprotocol/tasks`) and follows them to
//! their results.
//!
//! - [`TasksClient`] speaks to one server over Streamable HTTP with rmcp,
//!   declaring the tasks extension on every request. [`TasksClient::follow`]
//!   drives the core's sans-IO follow loop ([`Follow`](mcp_tasks_core::Follow))
//!   over HTTP: it polls `tasks/get` when the machine says, at the server's
//!   pace by default ([`PacingMode::HintPaced`]: the `pollIntervalMs` hint is
//!   the pace, capped under half the advertised orphan window) or, with
//!   [`PacingMode::HintAsFloor`], on the client's own backoff with the hint
//!   as a floor; answers `inputRequests` through an [`InputResponder`] once
//!   per key ([`InputLedger`]), reports progress to a [`TaskObserver`],
//!   reconnects after transient transport failures and stops at once on one
//!   that asking again cannot fix. Every request has a timeout
//!   ([`ClientOptions::request_timeout`]).
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
mod resend;

/// The attribute [`InputResponder`] implementations use (re-exported so callers need no extra dependency).
pub use async_trait::async_trait;
pub use book::{BOOK_ENV, HandleBook, HandleRecord, Resolution};
pub use client::{
    ClientOptions, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_REQUEST_TIMEOUT, Started, TaskHandle, TasksClient, client_capabilities,
};
pub use error::{BookError, ClientError};
pub use events::{Silent, TaskEvent, TaskObserver};
pub use failure::TransportFailure;
pub use input::{DeclineAll, FnResponder, InputPrompt, InputResponder, elicit_accept, elicit_cancel, elicit_decline};
pub use ledger::InputLedger;
pub use mcp_tasks_core::follow::DEFAULT_GIVE_UP_AFTER;
pub use mcp_tasks_wire::core_status;
pub use mcp_tasks_wire::{IDEMPOTENCY_KEY_META_KEY, TASK_SUPPORT_META_KEY, TaskSupport};
pub use outcome::TaskOutcome;
pub use pacer::{ORPHAN_WINDOW_META_KEY, PacingMode, PollPacer, ServerHints, server_hints};
pub use resend::{FIRST_RESEND_DELAY, MAX_RESEND_DELAY};
pub use rmcp;
