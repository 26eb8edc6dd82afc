//! A minimal real MCP server for the client's end-to-end tests: rmcp's own
//! in-memory `TaskManager` behind a stateless Streamable HTTP endpoint on
//! 127.0.0.1. Tools:
//!
//! - `echo` answers at once (no task);
//! - `sum {a, b}` is a task that completes with `a + b`;
//! - `slow {steps}` shows "step i of n" for each step and honours cancellation;
//! - `fail` ends `failed` with a JSON-RPC error; `tool_error` completes with `isError: true`;
//! - `ask` asks one elicitation (`confirm`) inside the task;
//! - `greet_mrtr` asks `user_name` in a `tools/call` input round, then becomes a task.
//!
//! After a `tasks/update`, the next `stale_reads` `tasks/get`s still show the
//! old `input_required` view — the eventual consistency the specification allows.

#![allow(dead_code, unreachable_pub, missing_docs)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const ORPHAN_KEY: &str = mcp_tasks_client::ORPHAN_WINDOW_META_KEY;

#[derive(Debug, Clone)]
pub struct Settings {
    pub poll_interval_ms: u64,
    pub ttl_ms: Option<u64>,
    pub orphan_window_ms: Option<u64>,
    pub stale_reads: usize,
    pub step_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { poll_interval_ms: 10, ttl_ms: Some(60_000), orphan_window_ms: Some(30_000), stale_reads: 0, step_ms: 20 }
    }
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Journal {
    pub gets: usize,
    /// The keys of each `tasks/update`, in order.
    pub updates: Vec<Vec<String>>,
    pub cancels: Vec<String>,
    pub calls: Vec<String>,
}

#[derive(Clone)]
pub struct TestServer {
    tasks: TaskManager,
    settings: Settings,
    journal: Arc<Mutex<Journal>>,
    stale: Arc<Mutex<HashMap<String, (DetailedTask, usize)>>>,
}

impl TestServer {
    pub fn new(settings: Settings) -> Self {
        TestServer { tasks: TaskManager::new(), settings, journal: Arc::default(), stale: Arc::default() }
    }

    pub fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap()
    }

    fn meta(&self) -> Option<MetaObject> {
        let window = self.settings.orphan_window_ms?;
        let mut m = MetaObject::new();
        m.0.insert(ORPHAN_KEY.to_owned(), json!(window));
        Some(m)
    }

    fn options(&self) -> TaskOptions {
        TaskOptions::new().with_ttl_ms(self.settings.ttl_ms).with_poll_interval_ms(self.settings.poll_interval_ms)
    }

    fn created(&self, task: Task) -> CallToolResponse {
        let mut r = CreateTaskResult::new(task);
        r.meta = self.meta();
        CallToolResponse::Task(r)
    }
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s.into())])
}

fn confirm_request(message: &str, field: &str) -> InputRequest {
    let schema = ElicitationSchema::builder().required_string(field).build().expect("schema");
    InputRequest::Elicitation(ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.to_owned(),
        requested_schema: schema,
    }))
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.journal().calls.push(request.name.to_string());
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let tasks_ok = context.client_capabilities().is_some_and(|c| c.supports_tasks());
        let step = Duration::from_millis(self.settings.step_ms);
        match request.name.as_ref() {
            "echo" => Ok(CallToolResponse::Complete(text(args.to_string()))),
            _ if !tasks_ok => Err(McpError::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "tasks required", None)),
            "sum" => {
                let (a, b) = (args["a"].as_i64().unwrap_or(0), args["b"].as_i64().unwrap_or(0));
                let task = self.tasks.spawn(self.options(), move |_ctx| {
                    Box::pin(async move {
                        tokio::time::sleep(step).await;
                        Ok(text((a + b).to_string()))
                    })
                });
                Ok(self.created(task))
            }
            "slow" => {
                let steps = args["steps"].as_u64().unwrap_or(5);
                let task = self.tasks.spawn(self.options().with_status_message("starting"), move |ctx| {
                    Box::pin(async move {
                        for i in 1..=steps {
                            ctx.set_status_message(format!("step {i} of {steps}"));
                            tokio::select! {
                                _ = ctx.cancelled() => return Err(TaskExit::Cancelled),
                                _ = tokio::time::sleep(step) => {}
                            }
                        }
                        Ok(text(format!("{steps} steps done")))
                    })
                });
                Ok(self.created(task))
            }
            "fail" => {
                let task = self.tasks.spawn(self.options(), move |_ctx| {
                    Box::pin(async move {
                        tokio::time::sleep(step).await;
                        Err(TaskExit::Error(McpError::internal_error("upstream exploded", Some(json!({"upstream": "db"})))))
                    })
                });
                Ok(self.created(task))
            }
            "tool_error" => {
                let task = self.tasks.spawn(self.options(), move |_ctx| {
                    Box::pin(async move { Ok(CallToolResult::error(vec![ContentBlock::text("bad input")])) })
                });
                Ok(self.created(task))
            }
            "ask" => {
                let task = self.tasks.spawn(self.options(), move |ctx| {
                    Box::pin(async move {
                        let answer = ctx.request_input("confirm", confirm_request("Delete it?", "answer")).await?;
                        Ok(text(format!("answer: {answer}")))
                    })
                });
                Ok(self.created(task))
            }
            "greet_mrtr" => {
                let name = request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get("user_name"))
                    .and_then(|v| v.pointer("/content/name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let Some(name) = name else {
                    let mut reqs = InputRequests::new();
                    reqs.insert("user_name".to_owned(), confirm_request("Your name?", "name"));
                    return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                        Some(reqs),
                        Some("round-1".to_owned()),
                    )));
                };
                if request.request_state.as_deref() != Some("round-1") {
                    return Err(McpError::invalid_params("requestState was not echoed", None));
                }
                let task =
                    self.tasks.spawn(self.options(), move |_ctx| Box::pin(async move { Ok(text(format!("hello {name}"))) }));
                Ok(self.created(task))
            }
            other => Err(McpError::invalid_params(format!("unknown tool {other}"), None)),
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.journal().gets += 1;
        let mut stale = self.stale.lock().unwrap();
        let detailed = match stale.get_mut(&request.task_id) {
            Some((old, left)) if *left > 0 => {
                *left -= 1;
                old.clone()
            }
            _ => {
                let fresh = self.tasks.get_task(&request.task_id)?;
                if fresh.status() == TaskStatus::InputRequired {
                    stale.insert(request.task_id.clone(), (fresh.clone(), 0));
                }
                fresh
            }
        };
        let mut r = GetTaskResult::new(detailed);
        r.meta = self.meta();
        Ok(r)
    }

    async fn update_task(&self, request: UpdateTaskParams, _context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.journal().updates.push(request.input_responses.keys().cloned().collect());
        if let Some((_, left)) = self.stale.lock().unwrap().get_mut(&request.task_id) {
            *left = self.settings.stale_reads;
        }
        self.tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(&self, request: CancelTaskParams, _context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.journal().cancels.push(request.task_id.clone());
        self.tasks.cancel_task(&request.task_id)
    }
}

/// A running HTTP endpoint serving `server`.
pub struct Running {
    pub addr: SocketAddr,
    pub url: String,
    ct: CancellationToken,
    join: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Stops accepting and waits for the server task to end.
    pub async fn stop(self) {
        self.ct.cancel();
        let _ = self.join.await;
    }
}

/// Serves `server` on `addr` (use port 0 for a free one).
pub async fn serve_on(server: TestServer, addr: SocketAddr) -> Running {
    let ct = CancellationToken::new();
    let service: StreamableHttpService<TestServer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.clone()),
        Default::default(),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_cancellation_token(ct.child_token()),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let join = tokio::spawn({
        let ct = ct.clone();
        async move {
            let _ = axum::serve(listener, router).with_graceful_shutdown(async move { ct.cancelled_owned().await }).await;
        }
    });
    Running { addr, url: format!("http://{addr}/mcp"), ct, join }
}

pub async fn serve(server: TestServer) -> Running {
    serve_on(server, "127.0.0.1:0".parse().unwrap()).await
}
