//! `greet`: synchronous, never a task. Returns `Hello, {name}!`.

use async_trait::async_trait;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, Tool};
use serde_json::json;

use super::schema;
use crate::inline::{InlineCall, InlineTool};

/// Greets by name (default "World").
#[derive(Debug, Clone, Copy, Default)]
pub struct Greet;

#[async_trait]
impl InlineTool for Greet {
    fn definition(&self) -> Tool {
        Tool::new(
            "greet",
            "Greets someone by name, synchronously.",
            schema(json!({"type": "object", "properties": {"name": {"type": "string"}}})),
        )
    }

    async fn call(&self, call: InlineCall) -> Result<CallToolResponse, McpError> {
        let name = call.arguments.get("name").and_then(|v| v.as_str()).unwrap_or("World");
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(format!("Hello, {name}!"))])))
    }
}
