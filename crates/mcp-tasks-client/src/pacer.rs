//! The client's pacing, which lives in the core as sans-IO decisions
//! ([`mcp_tasks_core::pacing`], [`mcp_tasks_core::follow`]): re-exported here
//! under the client's names, with the reading of the server's hints from an
//! rmcp task (the shared `mcp-tasks-wire` mapping).

pub use mcp_tasks_core::pacing::{Pacer as PollPacer, PacingMode, ServerHints};
pub use mcp_tasks_wire::{ORPHAN_WINDOW_META_KEY, server_hints};
