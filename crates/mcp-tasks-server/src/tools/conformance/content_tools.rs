//! The suite's plain content tools (`tools-call-*`, `json-schema-2020-12`,
//! `http-custom-header-server-validation`, `server-stateless`), declared the
//! rmcp way: one `#[tool_router]`, merged into [`ConformanceServer`]'s router.

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, ResourceContents};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::media::{RED_PIXEL_PNG, SILENT_WAV};
use super::server::ConformanceServer;

/// `greet`'s arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct GreetArgs {
    /// Who to greet (default: "World").
    #[serde(default)]
    pub name: Option<String>,
}

/// The schema `json_schema_2020_12_tool` publishes, exactly as written:
/// `$schema`, `$defs` with an `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`,
/// `additionalProperties` — nothing rewritten or dropped.
fn json_schema_2020_12() -> Arc<JsonObject> {
    object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }))
}

/// `test_custom_headers`: `region` travels in the `Mcp-Param-Region` header
/// too (SEP-2243), which rmcp checks against the body through `get_tool`.
fn custom_headers_schema() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region", "description": "Where to run"},
            "query": {"type": "string"}
        },
        "required": ["region"]
    }))
}

pub(crate) fn object(value: serde_json::Value) -> Arc<JsonObject> {
    match value {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

#[tool_router(router = content_router, vis = "pub(crate)")]
impl ConformanceServer {
    /// Answers at once: the synchronous tool of the task scenarios.
    #[tool(description = "Greets someone, synchronously.")]
    async fn greet(&self, Parameters(args): Parameters<GreetArgs>) -> String {
        format!("Hello, {}!", args.name.as_deref().unwrap_or("World"))
    }

    #[tool(description = "Returns a simple text response.")]
    async fn test_simple_text(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text("This is a simple text response for testing.")])
    }

    #[tool(description = "Returns an image (a 1x1 red PNG).")]
    async fn test_image_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::image(RED_PIXEL_PNG, "image/png")])
    }

    #[tool(description = "Returns audio (a short silent WAV).")]
    async fn test_audio_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::audio(SILENT_WAV, "audio/wav")])
    }

    #[tool(description = "Returns an embedded resource.")]
    async fn test_embedded_resource(&self) -> CallToolResult {
        let resource = ResourceContents::text("This is an embedded resource content.", "test://embedded-resource")
            .with_mime_type("text/plain");
        CallToolResult::success(vec![ContentBlock::resource(resource)])
    }

    #[tool(description = "Returns text, an image and an embedded resource.")]
    async fn test_multiple_content_types(&self) -> CallToolResult {
        let resource = ResourceContents::text(r#"{"test":"data","value":123}"#, "test://mixed-content-resource")
            .with_mime_type("application/json");
        CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(RED_PIXEL_PNG, "image/png"),
            ContentBlock::resource(resource),
        ])
    }

    #[tool(description = "Always fails, as a tool result with isError.")]
    async fn test_error_handling(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("This tool intentionally returns an error for testing")])
    }

    #[tool(description = "Reports progress 0, 50 and 100 of 100 when given a progress token.")]
    async fn test_tool_with_progress(&self, cx: RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let token = cx.meta.get_progress_token();
        for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if let Some(token) = &token {
                let note = ProgressNotificationParam::new(token.clone(), progress).with_total(100.0);
                cx.peer.notify_progress(note).await.map_err(|e| McpError::internal_error(e.to_string(), None))?;
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text("progress reported")]))
    }

    #[tool(description = "Diagnostic: logs at info level, then answers.")]
    async fn test_logging_tool(&self) -> CallToolResult {
        tracing::info!("test_logging_tool called");
        CallToolResult::success(vec![ContentBlock::text("logged")])
    }

    #[tool(description = "Tool with JSON Schema 2020-12 features", input_schema = json_schema_2020_12())]
    async fn json_schema_2020_12_tool(&self, arguments: JsonObject) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(format!("received {}", serde_json::Value::Object(arguments)))])
    }

    #[tool(description = "Echoes its region, which also travels in the Mcp-Param-Region header.",
           input_schema = custom_headers_schema())]
    async fn test_custom_headers(&self, arguments: JsonObject) -> CallToolResult {
        let region = arguments.get("region").and_then(|v| v.as_str()).unwrap_or_default();
        CallToolResult::success(vec![ContentBlock::text(format!("region: {region}"))])
    }
}
