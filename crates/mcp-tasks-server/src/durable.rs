//! [`DurableTasks`]: the durable task tools of one process — the runtime,
//! their routes and their listing — and everything an rmcp `ServerHandler`
//! delegates to them: `tools/call` of a durable tool, `tasks/get|update|cancel`,
//! the advertised capability, the merged `tools/list`.
//!
//! Wrap your handler with [`DurableTasks::wrap`] (see [`Durable`](crate::Durable))
//! or call these methods from your own `ServerHandler` by hand.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Clock, Policy, SystemClock, TaskId, TaskStatus as CoreStatus};
use mcp_tasks_runtime::{
    CompiledSchema, Execution, Runtime, RuntimeBuilder, RuntimeError, TaskContext, TaskTool, TaskView, ToolFailure, ToolSpec,
};
use mcp_tasks_store::TaskStore;
use mcp_tasks_wire::TaskSupport;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ExtensionCapabilities, GetTaskParams,
    GetTaskResult, JsonObject, RequestMetaObject, ServerCapabilities, TASKS_EXTENSION_ID, TaskPayload, Tool,
    UpdateTaskParams,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::{RequestContext, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::auth::request_principal;
use crate::errors::{tasks_required, to_mcp};
use crate::inline::InlineCall;
use crate::input_capabilities::declared_only;
use crate::request_state::{DEFAULT_REQUEST_STATE_TTL, RequestStateSeal};
use crate::request_trace::{meta_request_span, request_span};
use crate::server_error::ServerError;
use crate::typed::{DecodeCheck, IntoTaskResult, TypedTool};
use crate::wire;

/// How one durable tool is served.
struct DurableRoute {
    execution: Execution,
    /// For typed tools: decoding into the tool's type, checked before creation.
    decode: Option<(DecodeCheck, Arc<CompiledSchema>)>,
}

struct Shared {
    runtime: Runtime,
    routes: HashMap<String, DurableRoute>,
    /// The routed tools as `tools/list` shows them, in registration order.
    listing: Vec<Tool>,
    /// Task tools started by a handler's own tool of the same name (the
    /// front): listed as that tool, marked task-optional.
    fronted: HashSet<String>,
    /// Seals and opens the `requestState` of multi-round-trip answers.
    seal: RequestStateSeal,
    /// Cancelled at shutdown: inline waits end.
    stop: CancellationToken,
}

/// The durable task tools of a server and the runtime that runs them.
/// Create it once per process and clone it into each request's handler
/// (rmcp's stateless HTTP service builds a handler per request): clones
/// share one runtime.
#[derive(Clone)]
pub struct DurableTasks(Arc<Shared>);

impl std::fmt::Debug for DurableTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableTasks").field("tools", &self.0.listing.len()).finish_non_exhaustive()
    }
}

struct Registered {
    name: String,
    decode: Option<DecodeCheck>,
    output_schema: Option<Arc<JsonObject>>,
}

/// Configures [`DurableTasks`]: the tools, the policy, the runtime.
pub struct DurableTasksBuilder {
    runtime: RuntimeBuilder,
    order: Vec<Registered>,
    /// Registered with the runtime but answered by another tool of the same
    /// name (a front that gathers input, then starts the task).
    fronted: HashSet<String>,
    /// A typed tool whose arguments cannot be a tool's (reported at build).
    invalid: Option<ServerError>,
    /// The clock given to the runtime, which the requestState seal reads too.
    clock: Option<Arc<dyn Clock>>,
    /// The requestState key (none: generated at build) and time to live.
    request_state_key: Option<Vec<u8>>,
    request_state_ttl: Duration,
}

impl std::fmt::Debug for DurableTasksBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableTasksBuilder").field("runtime", &self.runtime).finish_non_exhaustive()
    }
}

impl DurableTasksBuilder {
    /// Adds a durable tool written against the raw [`TaskTool`] seam (JSON
    /// arguments, a hand-written input schema, still checked before creation).
    pub fn tool(self, tool: impl TaskTool) -> Self {
        self.tool_arc(Arc::new(tool))
    }

    /// Adds a raw durable tool already behind an `Arc`.
    pub fn tool_arc(mut self, tool: Arc<dyn TaskTool>) -> Self {
        self.order.push(Registered { name: tool.spec().name, decode: None, output_schema: None });
        self.runtime = self.runtime.tool(tool);
        self
    }

    /// Adds a typed durable tool: its arguments are checked against the
    /// schema derived from their type and decoded into it before a task is
    /// created.
    pub fn typed_tool<A, F, Fut, R>(mut self, tool: TypedTool<A, F>) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
        R: IntoTaskResult,
    {
        let name = tool.spec().name;
        match tool.into_parts() {
            Ok(parts) => {
                self.order.push(Registered { name, decode: Some(parts.decode), output_schema: parts.output_schema });
                self.runtime = self.runtime.tool(parts.tool);
            }
            Err(reason) => {
                self.invalid.get_or_insert(ServerError::Tool { tool: name, reason });
            }
        }
        self
    }

    /// Adds a typed durable tool in one line: `run(args, ctx)` with `args`
    /// of a `Deserialize + JsonSchema` type (task-required, re-runnable; use
    /// [`typed_tool`](Self::typed_tool) with a configured [`TypedTool`] for
    /// more).
    pub fn task<A, F, Fut, R>(self, name: impl Into<String>, description: impl Into<String>, run: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
        R: IntoTaskResult,
    {
        self.typed_tool(TypedTool::new(name, description, run))
    }

    /// The policy (validated when built).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.runtime = self.runtime.policy(policy);
        self
    }

    /// The clock every decision reads (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock.clone());
        self.runtime = self.runtime.clock(clock);
        self
    }

    /// The key that seals the `requestState` this server issues (at least
    /// [`MIN_KEY_BYTES`](crate::request_state::MIN_KEY_BYTES)). Without one a
    /// random key is drawn at build: states then survive only this process,
    /// so every instance of a fleet must be given the same key.
    pub fn request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.request_state_key = Some(key.into());
        self
    }

    /// How long an issued `requestState` stays valid (default
    /// [`DEFAULT_REQUEST_STATE_TTL`]).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// Whether this is the only process on its store (embedded SQLite): at
    /// start every lease belongs to a dead process.
    pub fn single_node(mut self, yes: bool) -> Self {
        self.runtime = self.runtime.single_node(yes);
        self
    }

    /// Any other runtime setting (concurrency, claim interval, jitter seed, …).
    pub fn runtime(mut self, configure: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder) -> Self {
        self.runtime = configure(self.runtime);
        self
    }

    /// Marks `name` as answered by a front of the same name (the stand-alone
    /// server's inline tools): the runtime runs it, the routes leave it alone.
    pub(crate) fn fronted(mut self, name: String) -> Self {
        self.fronted.insert(name);
        self
    }

    /// Adds a durable tool that your handler's own tool of the same name
    /// starts (with [`DurableTasks::start_task`]) once it has what it needs —
    /// say, after a multi-round-trip question. The runtime runs it; its
    /// `tools/call` and its `tools/list` entry stay your handler's.
    pub fn fronted_tool(self, tool: impl TaskTool) -> Self {
        let name = tool.spec().name;
        self.tool(tool).fronted(name)
    }

    /// Builds the runtime (validating the policy and compiling every schema)
    /// and the routes. The runtime is not started: call [`DurableTasks::start`].
    pub fn build(self) -> Result<DurableTasks, ServerError> {
        if let Some(invalid) = self.invalid {
            return Err(invalid);
        }
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let seal = match &self.request_state_key {
            Some(key) => RequestStateSeal::new(key, clock, self.request_state_ttl)?,
            None => RequestStateSeal::generated(clock, self.request_state_ttl),
        };
        let runtime = self.runtime.build()?;
        let specs: HashMap<String, ToolSpec> = runtime.tools().into_iter().map(|s| (s.name.clone(), s)).collect();
        let mut routes = HashMap::new();
        let mut listing = Vec::new();
        for registered in self.order {
            if self.fronted.contains(&registered.name) {
                continue;
            }
            let spec = &specs[&registered.name];
            let mut tool = definition_of(spec)?;
            tool.output_schema = registered.output_schema;
            let decode = match registered.decode {
                Some(check) => {
                    let schema = CompiledSchema::compile(&spec.input_schema)
                        .map_err(|reason| RuntimeError::InvalidToolSchema { tool: spec.name.clone(), reason })?;
                    Some((check, Arc::new(schema)))
                }
                None => None,
            };
            listing.push(tool);
            routes.insert(registered.name, DurableRoute { execution: spec.execution, decode });
        }
        let fronted = self.fronted;
        Ok(DurableTasks(Arc::new(Shared { runtime, routes, listing, fronted, seal, stop: CancellationToken::new() })))
    }
}

/// A task tool as `tools/list` shows it.
pub(crate) fn definition_of(spec: &ToolSpec) -> Result<Tool, ServerError> {
    let schema: JsonObject = match &spec.input_schema {
        Value::Object(map) => map.clone(),
        other => {
            return Err(ServerError::Tool {
                tool: spec.name.clone(),
                reason: format!("input_schema must be a JSON Schema object, got {other}"),
            });
        }
    };
    let mut tool = Tool::new(spec.name.clone(), spec.description.clone(), Arc::new(schema));
    // Listed with its task support, so a client (and `mcp-tasks tools`) can tell.
    let support = match spec.execution {
        Execution::TaskRequired => TaskSupport::Required,
        Execution::TaskOptional => TaskSupport::Optional,
    };
    support.mark(&mut tool);
    Ok(tool)
}

impl DurableTasks {
    /// A builder over `store`; the runtime and every handler share it.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcp_tasks_server::{DurableTasks, TaskContext, ToolFailure};
    /// #[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
    /// struct Report { topic: String }
    ///
    /// let store = Arc::new(mcp_tasks_store::MemoryStore::new());
    /// let tasks = DurableTasks::builder(store)
    ///     .task("report", "Writes a report", |args: Report, _ctx: TaskContext| async move {
    ///         Ok::<_, ToolFailure>(format!("a report on {}", args.topic))
    ///     })
    ///     .build()?;
    /// assert!(tasks.owns("report"));
    /// # Ok::<_, mcp_tasks_server::ServerError>(())
    /// ```
    pub fn builder(store: Arc<dyn TaskStore>) -> DurableTasksBuilder {
        DurableTasksBuilder {
            runtime: Runtime::builder(store),
            order: Vec::new(),
            fronted: HashSet::new(),
            invalid: None,
            clock: None,
            request_state_key: None,
            request_state_ttl: DEFAULT_REQUEST_STATE_TTL,
        }
    }

    /// The runtime (maintenance passes, dead letters, the store, …).
    pub fn runtime(&self) -> &Runtime {
        &self.0.runtime
    }

    /// Seals the `requestState` a multi-round-trip answer carries and opens
    /// what the client echoes back (tampered or expired: `-32602`).
    pub fn request_state(&self) -> &RequestStateSeal {
        &self.0.seal
    }

    /// The durable tools as `tools/list` shows them, in registration order.
    pub fn tools(&self) -> &[Tool] {
        &self.0.listing
    }

    /// Whether `tools/call` of `name` is answered here.
    pub fn owns(&self, name: &str) -> bool {
        self.0.routes.contains_key(name)
    }

    /// Starts the runtime: restart triage, then the executor and the
    /// maintenance loops. Call it once, before serving.
    pub async fn start(&self) -> Result<(), ServerError> {
        Ok(self.0.runtime.start().await?)
    }

    /// Ends inline waits, gives running handlers `grace` to finish, then
    /// releases their leases so the next start resumes them.
    pub async fn shutdown(&self, grace: Duration) {
        self.0.stop.cancel();
        self.0.runtime.shutdown(grace).await;
    }

    /// Cancelled by [`shutdown`](Self::shutdown).
    pub(crate) fn stop_token(&self) -> &CancellationToken {
        &self.0.stop
    }

    /// Declares what these tools need on top of `capabilities`: the tools
    /// capability, the tasks extension, and (experimental) the tools whose
    /// keyed `tools/call` sent again returns the same task, so clients may
    /// resend a call whose answer was lost.
    pub fn advertise(&self, capabilities: &mut ServerCapabilities) {
        capabilities.tools.get_or_insert_with(Default::default);
        capabilities
            .extensions
            .get_or_insert_with(ExtensionCapabilities::new)
            .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        mcp_tasks_wire::advertise_idempotent_calls(capabilities, self.0.listing.iter().map(|t| t.name.as_ref()));
    }

    /// `tools`, with each durable tool's definition put in place of a tool
    /// of the same name, a front of a durable tool marked task-optional, and
    /// the other durable tools appended (`last_page`: only on the last page
    /// of a paginated listing).
    pub fn merge_listing(&self, mut tools: Vec<Tool>, last_page: bool) -> Vec<Tool> {
        let mut listed = HashSet::new();
        for tool in &mut tools {
            if let Some(ours) = self.0.listing.iter().find(|t| t.name == tool.name) {
                *tool = ours.clone();
                listed.insert(ours.name.clone());
            } else if self.0.fronted.contains(tool.name.as_ref()) {
                // A front may start its task: say so, as a durable tool's entry does.
                TaskSupport::Optional.mark(tool);
            }
        }
        if last_page {
            tools.extend(self.0.listing.iter().filter(|t| !listed.contains(t.name.as_ref())).cloned());
        }
        tools
    }

    /// The definition of durable tool `name`.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        self.0.listing.iter().find(|t| t.name == name).cloned()
    }

    /// Answers a `tools/call` of a durable tool: a `CreateTaskResult` once
    /// the task is durable for a client that declared the tasks extension;
    /// the result inline (task-optional tools) or `-32021` (task-required)
    /// for one that did not; `-32602` naming the field for arguments that do
    /// not fit, with nothing created.
    pub async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call_durable_tool(request, cx).instrument(request_span("tools/call", cx)).await
    }

    async fn call_durable_tool(
        &self,
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call = InlineCall::from_request(request, cx, self.0.runtime.clone(), self.0.stop.clone())?;
        self.answer_call(call).await
    }

    /// The answer to a `tools/call` of durable tool `name` from its parts:
    /// the arguments, the request's `_meta`, the caller's capabilities and
    /// principal. The fast path ([`fast_create`](crate::fast_create)) answers
    /// with it, by the code the rmcp path ([`call_tool`](Self::call_tool)) runs.
    pub(crate) async fn answer_call_parts(
        &self,
        name: String,
        arguments: JsonObject,
        meta: &RequestMetaObject,
        capabilities: ClientCapabilities,
        principal: Option<String>,
    ) -> Result<CallToolResponse, McpError> {
        let runtime = self.0.runtime.clone();
        let call = InlineCall::from_parts(name, arguments, meta, capabilities, principal, runtime, self.0.stop.clone())?;
        self.answer_call(call).instrument(meta_request_span("tools/call", meta)).await
    }

    /// Both paths' `tools/call` of a durable tool: the typed arguments
    /// checked, then the task created (or run inline, or refused).
    async fn answer_call(&self, mut call: InlineCall) -> Result<CallToolResponse, McpError> {
        let name = call.name.as_str();
        let Some(route) = self.0.routes.get(name) else {
            return Err(McpError::invalid_params(
                format!("unknown durable tool \"{name}\""),
                Some(serde_json::json!({"tool": name})),
            ));
        };
        // Moved, not cloned: the arguments may be a megabyte.
        let arguments = Value::Object(std::mem::take(&mut call.arguments));
        if let Some((decode, schema)) = &route.decode
            && let Err(reason) = decode(&arguments)
        {
            return Err(refuse_undecodable(name, &arguments, schema, reason));
        }
        if call.declares_tasks() {
            call.start_task(name, arguments).await
        } else if route.execution == Execution::TaskOptional {
            call.run_task_inline(name, arguments).await
        } else {
            Err(tasks_required())
        }
    }

    /// Starts durable tool `tool` with `arguments` for the caller of `cx`
    /// (its principal and idempotency key) and answers with its
    /// `CreateTaskResult` once it is durable; `-32021` when the client did not
    /// declare the tasks extension on this request. For a handler's own tool
    /// that gathers input first (see [`DurableTasksBuilder::fronted_tool`]).
    pub async fn start_task(
        &self,
        tool: &str,
        arguments: Value,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let request = CallToolRequestParams::new(tool.to_owned());
        let call = InlineCall::from_request(request, cx, self.0.runtime.clone(), self.0.stop.clone())?;
        call.start_task(tool, arguments).await
    }

    /// `tasks/get`: the task with its status's payload and the orphan window
    /// in `_meta`; `-32602` for an unknown, expired or another caller's task.
    /// Input requests go only to a client that declared their capability on
    /// this request (`-32021` naming it when none is left).
    pub async fn get_task(
        &self,
        request: GetTaskParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let principal = request_principal(cx);
        let capabilities = cx.client_capabilities().unwrap_or_default();
        self.answer_get(request.task_id, principal.as_deref(), &capabilities, request_span("tasks/get", cx)).await
    }

    /// The answer to `tasks/get` from its parts: the task id, the caller's
    /// principal and declared capabilities, the request's span. The rmcp
    /// path ([`get_task`](Self::get_task)) answers with it; the fast path
    /// ([`fast_get`](crate::fast_get)) with [`answer_get_unparsed`](Self::answer_get_unparsed).
    pub(crate) async fn answer_get(
        &self,
        task_id: String,
        principal: Option<&str>,
        capabilities: &ClientCapabilities,
        span: tracing::Span,
    ) -> Result<GetTaskResult, McpError> {
        let id = TaskId(task_id);
        let view = self.0.runtime.get_task(&id, principal).instrument(span).await.map_err(to_mcp)?;
        answer_from_view(view, capabilities)
    }

    /// [`answer_get`](Self::answer_get) for an answer written out from its
    /// parts: a completed task's result, when the store kept it as JSON text
    /// holding an object, comes as that text (undecoded), and the answer's
    /// own result object is then a placeholder. [`with_result_text`] joins
    /// the two into `answer_get`'s answer.
    pub(crate) async fn answer_get_unparsed(
        &self,
        task_id: String,
        principal: Option<&str>,
        capabilities: &ClientCapabilities,
        span: tracing::Span,
    ) -> Result<(GetTaskResult, Option<Box<RawValue>>), McpError> {
        let id = TaskId(task_id);
        let (mut view, result_text) =
            self.0.runtime.get_task_for_answer(&id, principal).instrument(span).await.map_err(to_mcp)?;
        // Only a completed task's object goes out as it is stored; any other
        // result is decoded and answered as `wire` answers it.
        let result_text = match result_text {
            Some(text) if view.record.status == CoreStatus::Completed && is_object(&text) => Some(text),
            Some(text) => {
                view.record.result = Some(decode_result(&text)?);
                None
            }
            None => None,
        };
        Ok((answer_from_view(view, capabilities)?, result_text))
    }

    /// `tasks/update`: stores answers to the task's input requests, each
    /// checked against its requested schema (`-32602` naming the field).
    pub async fn update_task(&self, request: UpdateTaskParams, cx: &RequestContext<RoleServer>) -> Result<(), McpError> {
        let id = TaskId(request.task_id);
        // Answers to a task that has ended are ignored (Ok), like unknown keys.
        let principal = request_principal(cx);
        let answering = self.0.runtime.answer_input(&id, principal.as_deref(), request.input_responses);
        answering.instrument(request_span("tasks/update", cx)).await.map_err(to_mcp)
    }

    /// `tasks/cancel`: records the cancel durably and stops a local handler.
    pub async fn cancel_task(&self, request: CancelTaskParams, cx: &RequestContext<RoleServer>) -> Result<(), McpError> {
        let id = TaskId(request.task_id);
        let principal = request_principal(cx);
        let cancelling = self.0.runtime.cancel_task(&id, principal.as_deref());
        cancelling.instrument(request_span("tasks/cancel", cx)).await.map(drop).map_err(to_mcp)
    }
}

/// `-32602` for arguments that do not decode into a typed tool's type: the
/// schema's own violations when there are any (they name the field), else
/// the decoder's reason.
fn refuse_undecodable(tool: &str, arguments: &Value, schema: &CompiledSchema, reason: String) -> McpError {
    let violations = schema.violations(arguments);
    if !violations.is_empty() {
        return to_mcp(RuntimeError::InvalidArguments { tool: tool.to_owned(), violations });
    }
    McpError::invalid_params(
        format!("invalid arguments for tool \"{tool}\": {reason}"),
        Some(serde_json::json!({"tool": tool, "errors": [{"pointer": "", "expected": reason}]})),
    )
}

/// The `tasks/get` answer for `view`, its input requests only of kinds the
/// request's client declared it can answer.
fn answer_from_view(view: TaskView, capabilities: &ClientCapabilities) -> Result<GetTaskResult, McpError> {
    let mut result = wire::into_get_result(view)?;
    if let TaskPayload::InputRequired { input_requests } = &mut result.task.payload {
        *input_requests = declared_only(std::mem::take(input_requests), capabilities)?;
    }
    Ok(result)
}

/// Whether a stored result's text holds a JSON object.
fn is_object(text: &RawValue) -> bool {
    text.get().trim_start().starts_with('{')
}

/// A stored result's text, decoded (into a value, or an object).
fn decode_result<T: DeserializeOwned>(text: &RawValue) -> Result<T, McpError> {
    serde_json::from_str(text.get())
        .map_err(|e| McpError::internal_error(format!("a stored result does not decode: {e}"), None))
}

/// [`DurableTasks::answer_get_unparsed`]'s parts as one answer: the result
/// text, decoded, in place of the placeholder object.
pub(crate) fn with_result_text(
    mut result: GetTaskResult,
    result_text: Option<Box<RawValue>>,
) -> Result<GetTaskResult, McpError> {
    if let (Some(text), TaskPayload::Completed { result: object }) = (result_text, &mut result.task.payload) {
        *object = decode_result(&text)?;
    }
    Ok(result)
}
