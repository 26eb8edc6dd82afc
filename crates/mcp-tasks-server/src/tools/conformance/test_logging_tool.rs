//! `test_logging_tool`: does some work without logging to the client — this
//! server sends no `notifications/message` unless a request asks for a log level.

use async_trait::async_trait;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, Tool};
use serde_json::json;

use super::schema;
use crate::inline::{InlineCall, InlineTool};

/// A diagnostic tool that would log, if asked to.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestLoggingTool;

#[async_trait]
impl InlineTool for TestLoggingTool {
    fn definition(&self) -> Tool {
        Tool::new(
            "test_logging_tool",
            "Diagnostic: runs without sending log notifications.",
            schema(json!({"type": "object"})),
        )
    }

    async fn call(&self, _call: InlineCall) -> Result<CallToolResponse, McpError> {
        tracing::info!("test_logging_tool ran (logged on the server only)");
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text("done, without client logs")])))
    }
}
