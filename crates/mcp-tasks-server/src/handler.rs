//! The stand-alone server's rmcp `ServerHandler` for its inline tools: one
//! cheap clone per request (stateless mode builds a handler per request),
//! all of them sharing one runtime through [`DurableTasks`].

use std::collections::HashMap;
use std::sync::Arc;

use mcp_tasks_runtime::{CompiledSchema, RuntimeError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::Value;
use tracing::Instrument;

use crate::durable::DurableTasks;
use crate::errors::to_mcp;
use crate::inline::{InlineCall, InlineTool};

/// Everything requests share.
pub(crate) struct Shared {
    /// The durable tools and the runtime (inline tools start tasks through it).
    pub(crate) tasks: DurableTasks,
    /// The inline tools, each with its compiled input schema.
    pub(crate) routes: HashMap<String, (Arc<dyn InlineTool>, Arc<CompiledSchema>)>,
    /// `tools/list`, inline and durable tools in registration order.
    pub(crate) listing: Vec<Tool>,
    pub(crate) server_info: Implementation,
    pub(crate) instructions: Option<String>,
}

/// The stand-alone server's own handler: its inline tools and its name.
/// rmcp builds one per request, wrapped in [`Durable`](crate::Durable),
/// which answers the durable tools and `tasks/*`.
#[derive(Clone)]
pub(crate) struct TaskHandler(pub(crate) Arc<Shared>);

impl ServerHandler for TaskHandler {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.0.server_info.clone());
        if let Some(text) = &self.0.instructions {
            config = config.with_instructions(text.clone());
        }
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.0.listing.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.listing.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Some((tool, schema)) = self.0.routes.get(&name).cloned() else {
            return Err(McpError::invalid_params(
                format!("unknown tool \"{name}\""),
                Some(serde_json::json!({"tool": name})),
            ));
        };
        let tasks = &self.0.tasks;
        let call = InlineCall::from_request(request, &cx, tasks.runtime().clone(), tasks.stop_token().clone())?;
        // A task it starts is checked again by the runtime, against the task tool's schema.
        let violations = schema.violations(&Value::Object(call.arguments.clone()));
        if !violations.is_empty() {
            return Err(to_mcp(RuntimeError::InvalidArguments { tool: name, violations }));
        }
        tool.call(call).instrument(crate::request_trace::request_span("tools/call", &cx)).await
    }
}
