//! Tools: [`support`], small helpers every tool author may use, and, with
//! the `tool-sets` feature, the tool sets `mcp-tasks serve` offers: `demo`
//! (realistic examples), `conformance` (the fixtures the official
//! conformance suite calls) and `fleet` (journalled fixtures for
//! multi-instance tests). One tool per file.

pub mod support;

#[cfg(feature = "tool-sets")]
mod tool_set;
#[cfg(feature = "tool-sets")]
pub use tool_set::{ToolSet, parse_tool_sets};

#[cfg(feature = "tool-sets")]
pub mod conformance;
#[cfg(feature = "tool-sets")]
pub mod demo;
#[cfg(feature = "tool-sets")]
pub mod fleet;
