//! The `conformance` tool set: the fixtures the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`) calls. `greet` comes first:
//! the header-validation scenario calls the first listed tool with `{}`.

mod confirm_delete;
mod failing_job;
mod greet;
mod multi_input;
mod protocol_error_job;
mod slow_compute;
mod test_logging_tool;
mod test_missing_capability;
mod test_streaming_elicitation;
mod test_tool_with_task;

pub use confirm_delete::ConfirmDelete;
pub use failing_job::FailingJob;
pub use greet::Greet;
pub use multi_input::MultiInput;
pub use protocol_error_job::ProtocolErrorJob;
pub use slow_compute::SlowCompute;
pub use test_logging_tool::TestLoggingTool;
pub use test_missing_capability::TestMissingCapability;
pub use test_streaming_elicitation::TestStreamingElicitation;
pub use test_tool_with_task::{TestToolWithTask, TestToolWithTaskFront};

use crate::builder::TaskServerBuilder;

/// Registers every conformance fixture.
pub fn register(builder: TaskServerBuilder) -> TaskServerBuilder {
    builder
        .inline_tool(Greet)
        .tool(SlowCompute)
        .tool(FailingJob)
        .tool(ProtocolErrorJob)
        .tool(ConfirmDelete)
        .tool(MultiInput)
        .inline_tool(TestToolWithTaskFront)
        .tool(TestToolWithTask)
        .inline_tool(TestMissingCapability)
        .inline_tool(TestStreamingElicitation)
        .inline_tool(TestLoggingTool)
}

/// A JSON Schema object for an inline tool's definition.
pub(crate) fn schema(value: serde_json::Value) -> std::sync::Arc<rmcp::model::JsonObject> {
    match value {
        serde_json::Value::Object(map) => std::sync::Arc::new(map),
        _ => std::sync::Arc::new(rmcp::model::JsonObject::new()),
    }
}
