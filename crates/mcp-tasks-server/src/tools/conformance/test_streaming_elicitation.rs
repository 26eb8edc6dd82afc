//! `test_streaming_elicitation`: asks for input the 2026-07-28 way — an
//! `InputRequiredResult` in the response, never a request on the stream.

use std::collections::BTreeMap;

use async_trait::async_trait;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, InputRequest, InputRequiredResult, Tool};
use serde_json::json;

use super::schema;
use crate::inline::{InlineCall, InlineTool};
use crate::tools::support::elicit_form;

/// A diagnostic tool that elicits within the request.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestStreamingElicitation;

#[async_trait]
impl InlineTool for TestStreamingElicitation {
    fn definition(&self) -> Tool {
        Tool::new(
            "test_streaming_elicitation",
            "Diagnostic: asks for confirmation through inputRequests.",
            schema(json!({"type": "object"})),
        )
    }

    async fn call(&self, call: InlineCall) -> Result<CallToolResponse, McpError> {
        if let Some(answer) = call.input_responses.as_ref().and_then(|r| r.get("confirm")) {
            return Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(format!(
                "answer received: {answer}"
            ))])));
        }
        let request: InputRequest =
            serde_json::from_value(elicit_form("Continue?", json!({"ok": {"type": "boolean"}}), &["ok"]))
                .map_err(|e| McpError::internal_error(format!("bad elicitation request: {e}"), None))?;
        let requests = BTreeMap::from([("confirm".to_owned(), request)]);
        Ok(CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), None)))
    }
}
