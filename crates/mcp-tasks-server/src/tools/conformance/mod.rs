//! The `conformance` tool set: the fixtures the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`) calls, served by
//! [`ConformanceServer`], an rmcp handler written the rmcp way, with the
//! durable task tools (one per file here) added through
//! [`TaskServerBuilder::handler`](crate::TaskServerBuilder::handler).

mod confirm_delete;
mod content_tools;
mod failing_job;
mod media;
mod mrtr_tools;
mod multi_input;
mod prompts;
mod protocol_error_job;
mod resources;
mod server;
mod slow_compute;
mod test_tool_with_task;

pub use confirm_delete::ConfirmDelete;
pub use content_tools::GreetArgs;
pub use failing_job::FailingJob;
pub use multi_input::MultiInput;
pub use prompts::{EmbedArgs, TwoArgs};
pub use protocol_error_job::ProtocolErrorJob;
pub use server::ConformanceServer;
pub use slow_compute::SlowCompute;
pub use test_tool_with_task::TestToolWithTask;

use crate::builder::TaskServerBuilder;

/// Registers the durable fixtures and serves [`ConformanceServer`] around them.
pub fn register(builder: TaskServerBuilder) -> TaskServerBuilder {
    builder
        .tool(SlowCompute)
        .tool(FailingJob)
        .tool(ProtocolErrorJob)
        .tool(ConfirmDelete)
        .tool(MultiInput)
        // Started by the handler's own `test_tool_with_task` once it knows the name.
        .fronted_tool(TestToolWithTask)
        .handler(ConformanceServer::new)
}
