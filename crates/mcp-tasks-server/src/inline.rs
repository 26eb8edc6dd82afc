//! Tools that answer within the request: synchronous tools, MRTR rounds
//! (`InputRequiredResult`), and fronts that gather input first and then start
//! a durable task ([`InlineCall::start_task`]).

use std::time::Duration;

use async_trait::async_trait;
use mcp_tasks_core::TaskId;
use mcp_tasks_runtime::{CreateTask, Runtime};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ErrorCode, InputResponses, JsonObject, RequestMetaObject,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::auth::request_principal;
use crate::errors::{tasks_required, to_mcp};
use crate::idempotency_key::idempotency_key;
use crate::wire;

/// A tool that answers within the request.
#[async_trait]
pub trait InlineTool: Send + Sync + 'static {
    /// The tool as `tools/list` shows it. An inline tool may share its name
    /// with a task tool: it is then the task's front (see [`InlineCall::start_task`]).
    fn definition(&self) -> Tool;

    /// Answers one `tools/call`.
    async fn call(&self, call: InlineCall) -> Result<CallToolResponse, McpError>;
}

/// One `tools/call` as an inline tool sees it.
#[derive(Debug, Clone)]
pub struct InlineCall {
    /// The tool's name.
    pub name: String,
    /// The call's arguments.
    pub arguments: JsonObject,
    /// Answers to input requests of a previous round (MRTR).
    pub input_responses: Option<InputResponses>,
    /// The opaque state echoed from a previous round (untrusted).
    pub request_state: Option<String>,
    /// What the client declared on this request.
    pub client_capabilities: ClientCapabilities,
    /// The authenticated caller, if any.
    pub principal: Option<String>,
    /// An idempotency key the client sent with the call, if any.
    pub idempotency_key: Option<String>,
    /// The client's `_meta.traceparent`, if valid: stored with a task it
    /// starts when no span is exported (else the request span's is).
    pub(crate) trace_parent: Option<String>,
    pub(crate) runtime: Runtime,
    pub(crate) cancelled: CancellationToken,
    pub(crate) server_stop: CancellationToken,
}

impl InlineCall {
    /// One `tools/call` as it arrived: its arguments, MRTR state, the
    /// caller's capabilities, principal and idempotency key; `-32602` for
    /// an idempotency key no store would keep alike.
    pub(crate) fn from_request(
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
        runtime: Runtime,
        server_stop: CancellationToken,
    ) -> Result<Self, McpError> {
        let mut call = InlineCall::from_parts(
            request.name.to_string(),
            request.arguments.unwrap_or_default(),
            &cx.meta,
            cx.client_capabilities().unwrap_or_default(),
            request_principal(cx),
            runtime,
            server_stop,
        )?;
        call.input_responses = request.input_responses;
        call.request_state = request.request_state;
        call.cancelled = cx.ct.clone();
        Ok(call)
    }

    /// A `tools/call` without MRTR state from its parts: the tool's name and
    /// arguments, the request's `_meta` (idempotency key, `traceparent`), the
    /// caller's capabilities and principal. Nothing cancels it but the server's stop.
    /// `-32602` for an idempotency key no store would keep alike.
    pub(crate) fn from_parts(
        name: String,
        arguments: JsonObject,
        meta: &RequestMetaObject,
        client_capabilities: ClientCapabilities,
        principal: Option<String>,
        runtime: Runtime,
        server_stop: CancellationToken,
    ) -> Result<Self, McpError> {
        Ok(InlineCall {
            name,
            arguments,
            input_responses: None,
            request_state: None,
            client_capabilities,
            principal,
            idempotency_key: idempotency_key(meta)?,
            trace_parent: crate::request_trace::meta_traceparent(meta)
                .and_then(mcp_tasks_runtime::trace_context::valid_traceparent),
            runtime,
            cancelled: CancellationToken::new(),
            server_stop,
        })
    }

    /// Whether the client declared the tasks extension on this request.
    pub fn declares_tasks(&self) -> bool {
        self.client_capabilities.supports_tasks()
    }

    /// Starts the durable task `tool` with `arguments` for this caller and
    /// answers with its `CreateTaskResult`; `-32021` when the client did not
    /// declare the tasks extension.
    pub async fn start_task(&self, tool: &str, arguments: Value) -> Result<CallToolResponse, McpError> {
        if !self.declares_tasks() {
            return Err(tasks_required());
        }
        let view = self.runtime.create_task(self.create(tool, arguments)).await.map_err(to_mcp)?;
        Ok(CallToolResponse::Task(wire::create_result(&view)))
    }

    /// Runs the durable task `tool` and waits for its outcome, for a client
    /// that cannot take a task: the result inline, a failed task's error as
    /// the call's error. A task that needs input cannot be answered inline:
    /// it is cancelled and the call gets `-32021`. A client that goes away
    /// cancels the task. A call whose idempotency key joined an existing
    /// task never cancels it: someone else may be following that task.
    pub async fn run_task_inline(&self, tool: &str, arguments: Value) -> Result<CallToolResponse, McpError> {
        let (view, owned) = self.runtime.create_or_join_task(self.create(tool, arguments)).await.map_err(to_mcp)?;
        let id = view.record.id.clone();
        let principal = self.principal.as_deref();
        let mut pause = Duration::from_millis(2);
        loop {
            let view = self.runtime.get_task(&id, principal).await.map_err(to_mcp)?;
            let r = &view.record;
            match r.status {
                mcp_tasks_core::TaskStatus::Completed => {
                    return wire::call_tool_result(r.result.as_ref()).map(CallToolResponse::Complete);
                }
                mcp_tasks_core::TaskStatus::Failed => {
                    let e = r.error.clone().unwrap_or_else(|| mcp_tasks_core::TaskError::internal("task failed"));
                    return Err(McpError::new(ErrorCode(e.code as i32), e.message, e.data));
                }
                mcp_tasks_core::TaskStatus::Cancelled => {
                    return Err(McpError::internal_error(format!("task {id} was cancelled"), None));
                }
                mcp_tasks_core::TaskStatus::InputRequired => {
                    if owned {
                        self.cancel(&id).await;
                    }
                    return Err(tasks_required());
                }
                mcp_tasks_core::TaskStatus::Working => {}
            }
            tokio::select! {
                _ = self.cancelled.cancelled() => {
                    if owned {
                        self.cancel(&id).await;
                    }
                    return Err(McpError::internal_error("the request was cancelled", None));
                }
                _ = self.server_stop.cancelled() => {
                    // The task stays durable; a restart resumes it.
                    return Err(McpError::internal_error(
                        format!("the server is shutting down; task {id} will resume after restart"),
                        None,
                    ));
                }
                _ = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    async fn cancel(&self, id: &TaskId) {
        if let Err(e) = self.runtime.cancel_task(id, self.principal.as_deref()).await {
            tracing::warn!(task = %id, error = %e, "could not cancel an inline task");
        }
    }

    fn create(&self, tool: &str, arguments: Value) -> CreateTask {
        CreateTask {
            tool: tool.to_owned(),
            arguments,
            principal: self.principal.clone(),
            idempotency_key: self.idempotency_key.clone(),
            trace_parent: self.trace_parent.clone(),
        }
    }
}
