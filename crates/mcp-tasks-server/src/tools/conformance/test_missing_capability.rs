//! `test_missing_capability`: needs the client's `sampling` capability, and
//! says so with `-32021` when the request did not declare it.

use async_trait::async_trait;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, Tool};
use serde_json::json;

use super::schema;
use crate::inline::{InlineCall, InlineTool};

/// A diagnostic tool that requires `sampling`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestMissingCapability;

#[async_trait]
impl InlineTool for TestMissingCapability {
    fn definition(&self) -> Tool {
        Tool::new(
            "test_missing_capability",
            "Diagnostic: requires the client's sampling capability.",
            schema(json!({"type": "object"})),
        )
    }

    async fn call(&self, call: InlineCall) -> Result<CallToolResponse, McpError> {
        if call.client_capabilities.sampling.is_none() {
            let required = serde_json::from_value(json!({"sampling": {}}))
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            return Err(McpError::missing_required_client_capability(required));
        }
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text("the client declared sampling")])))
    }
}
