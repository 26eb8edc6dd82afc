//! The rmcp `ServerHandler`: one cheap clone per request (stateless mode
//! builds a handler per request), all of them sharing one runtime.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_tasks_core::TaskId;
use mcp_tasks_runtime::{CompiledSchema, Execution, Runtime, RuntimeError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::Value;

use crate::auth::Principal;
use crate::errors::{tasks_required, to_mcp};
use crate::inline::{InlineCall, InlineTool};
use crate::wire;

/// The `_meta` key under which a client may send an idempotency key with a
/// `tools/call`: the same key and call return the same task.
pub const IDEMPOTENCY_KEY_META_KEY: &str = "dev.mcp-tasks/idempotencyKey";

/// How one tool name is served.
#[derive(Clone)]
pub(crate) enum Route {
    /// Answered in the request (possibly fronting a task tool of the same
    /// name), its arguments checked against its definition's input schema.
    Inline(Arc<dyn InlineTool>, Arc<CompiledSchema>),
    /// A durable task tool.
    Task(Execution),
}

/// Everything requests share.
pub(crate) struct Shared {
    pub(crate) runtime: Runtime,
    pub(crate) routes: HashMap<String, Route>,
    /// `tools/list`, in registration order.
    pub(crate) listing: Vec<Tool>,
    pub(crate) server_info: Implementation,
    pub(crate) instructions: Option<String>,
    /// Cancelled when the server stops: inline waits end.
    pub(crate) stop: tokio_util::sync::CancellationToken,
}

/// The handler rmcp builds per request.
#[derive(Clone)]
pub(crate) struct TaskHandler(pub(crate) Arc<Shared>);

fn principal(cx: &RequestContext<RoleServer>) -> Option<String> {
    cx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .map(|p| p.0.clone())
}

impl ServerHandler for TaskHandler {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
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
        let Some(route) = self.0.routes.get(&name).cloned() else {
            return Err(McpError::invalid_params(
                format!("unknown tool \"{name}\""),
                Some(serde_json::json!({"tool": name})),
            ));
        };
        let idempotency_key = cx
            .meta
            .get(IDEMPOTENCY_KEY_META_KEY)
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut call = InlineCall {
            name: name.clone(),
            arguments: request.arguments.unwrap_or_default(),
            input_responses: request.input_responses,
            request_state: request.request_state,
            client_capabilities: cx.client_capabilities().unwrap_or_default(),
            principal: principal(&cx),
            idempotency_key,
            runtime: self.0.runtime.clone(),
            cancelled: cx.ct.clone(),
            server_stop: self.0.stop.clone(),
        };
        match route {
            Route::Inline(tool, schema) => {
                // A task it starts is checked again by the runtime, against the task tool's schema.
                let violations = schema.violations(&Value::Object(call.arguments.clone()));
                if !violations.is_empty() {
                    return Err(to_mcp(RuntimeError::InvalidArguments { tool: name, violations }));
                }
                tool.call(call).await
            }
            Route::Task(execution) => {
                // Moved, not cloned: the arguments may be a megabyte.
                let arguments = Value::Object(std::mem::take(&mut call.arguments));
                if call.declares_tasks() {
                    call.start_task(&name, arguments).await
                } else if execution == Execution::TaskOptional {
                    call.run_task_inline(&name, arguments).await
                } else {
                    Err(tasks_required())
                }
            }
        }
    }

    async fn get_task(&self, request: GetTaskParams, cx: RequestContext<RoleServer>) -> Result<GetTaskResult, McpError> {
        let id = TaskId(request.task_id);
        let view = self.0.runtime.get_task(&id, principal(&cx).as_deref()).await.map_err(to_mcp)?;
        wire::get_result(&view)
    }

    async fn update_task(&self, request: UpdateTaskParams, cx: RequestContext<RoleServer>) -> Result<(), McpError> {
        let id = TaskId(request.task_id);
        // Answers to a task that has ended are ignored (Ok), like unknown keys.
        self.0.runtime.answer_input(&id, principal(&cx).as_deref(), request.input_responses).await.map_err(to_mcp)
    }

    async fn cancel_task(&self, request: CancelTaskParams, cx: RequestContext<RoleServer>) -> Result<(), McpError> {
        let id = TaskId(request.task_id);
        self.0.runtime.cancel_task(&id, principal(&cx).as_deref()).await.map(drop).map_err(to_mcp)
    }
}
