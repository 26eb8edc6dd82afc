//! Shared test harness: a real server on 127.0.0.1:0 over a real SQLite file,
//! real rmcp clients, raw HTTP for bad input.
#![allow(dead_code, unreachable_pub)]

pub mod raw_tcp;

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_server::tools::ToolSet;
use mcp_tasks_server::{TaskServer, TaskServerBuilder};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, CreateTaskResult, ErrorData, GetTaskParams,
    GetTaskResult, Implementation, ProtocolVersion, TaskStatus,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError};
use serde_json::{Value, json};

/// A running server and what it needs to stay alive.
pub struct Harness {
    pub url: String,
    pub server: TaskServer,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Harness {
    /// Stops the server (graceful shutdown) and waits for it.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            let _ = serving.await;
        }
    }
}

/// A server with the conformance and demo tools, a fast executor and fast retries.
pub async fn start() -> Harness {
    start_with(|b| b).await
}

/// A server with the conformance and demo tools, configured further by `configure`.
pub async fn start_with(configure: impl FnOnce(TaskServerBuilder) -> TaskServerBuilder) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open(dir.path().join("tasks.db")).unwrap());
    let mut policy = mcp_tasks_core::Policy::default();
    policy.retry.base_delay = Duration::from_millis(10);
    policy.retry.max_delay = Duration::from_millis(40);
    let builder = TaskServer::builder(store)
        .policy(policy)
        .single_node(true)
        .shutdown_grace(Duration::from_millis(200))
        .runtime(|r| r.claim_interval(Duration::from_millis(10)).jitter_seed(1));
    let builder = ToolSet::Conformance.register(builder);
    let builder = ToolSet::Demo.register(builder);
    let server = configure(builder).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.clone().serve(listener, async move {
        let _ = stopped.await;
    }));
    let serving = tokio::spawn(async move {
        serving.await.unwrap().unwrap();
    });
    Harness { url, server, stop: Some(stop), serving: Some(serving), _dir: dir }
}

pub type Client = RunningService<RoleClient, ClientConfig>;

/// Capabilities with the tasks extension and form elicitation.
pub fn tasks_capabilities() -> ClientCapabilities {
    serde_json::from_value(json!({
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}}
    }))
    .unwrap()
}

/// An rmcp client on protocol 2026-07-28 that declares the tasks extension.
pub async fn client(url: &str) -> Client {
    connect(url, tasks_capabilities(), None).await
}

/// An rmcp client that declares nothing.
pub async fn plain_client(url: &str) -> Client {
    connect(url, ClientCapabilities::default(), None).await
}

/// An rmcp client that declares tasks and sends `token` as a bearer token.
pub async fn client_with_token(url: &str, token: &str) -> Client {
    connect(url, tasks_capabilities(), Some(token)).await
}

async fn connect(url: &str, caps: ClientCapabilities, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let info = ClientConfig::new(caps, Implementation::new("mcp-tasks-server-tests", "0"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    info.serve_with_lifecycle(transport, lifecycle).await.unwrap()
}

/// Calls `tool` once (no MRTR driving) and returns the raw response.
pub async fn call(client: &Client, tool: &str, arguments: Value) -> Result<CallToolResponse, ErrorData> {
    let params =
        CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments.as_object().cloned().unwrap_or_default());
    client.call_tool_once(params).await.map_err(mcp_error)
}

/// Calls `tool` and expects a task.
pub async fn create(client: &Client, tool: &str, arguments: Value) -> CreateTaskResult {
    match call(client, tool, arguments).await.unwrap() {
        CallToolResponse::Task(task) => task,
        other => panic!("expected a task from {tool}, got {other:?}"),
    }
}

/// `tasks/get`.
pub async fn get(client: &Client, id: &str) -> Result<GetTaskResult, ErrorData> {
    client.peer().get_task(GetTaskParams::new(id.to_owned())).await.map_err(mcp_error)
}

/// Polls `tasks/get` until `done` holds (at most 30 s of real time: a bound
/// for a loaded CI machine, not a timing).
pub async fn poll_until(client: &Client, id: &str, done: impl Fn(&GetTaskResult) -> bool) -> GetTaskResult {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got = get(client, id).await.unwrap();
        if done(&got) {
            return got;
        }
        assert!(tokio::time::Instant::now() < deadline, "task {id} never got there; last seen {got:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Polls until the task is terminal.
pub async fn poll_to_end(client: &Client, id: &str) -> GetTaskResult {
    poll_until(client, id, |g| g.task.status().is_terminal()).await
}

/// Polls until the task has this status (or panics if it ends otherwise).
pub async fn poll_to_status(client: &Client, id: &str, status: TaskStatus) -> GetTaskResult {
    let got = poll_until(client, id, |g| g.task.status() == status || g.task.status().is_terminal()).await;
    assert_eq!(got.task.status(), status, "{got:?}");
    got
}

/// The JSON-RPC error inside a service error.
pub fn mcp_error(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The whole wire form of a task result.
pub fn wire(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

/// Raw HTTP: the `_meta` a 2026-07-28 request must carry.
pub fn request_meta(tasks: bool) -> Value {
    let caps = if tasks { json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}) } else { json!({}) };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}

/// Raw HTTP: POSTs `body` with the standard headers plus `extra`; returns status and JSON body.
pub async fn post_raw(url: &str, body: impl Into<reqwest::Body>, extra: &[(&str, &str)]) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28");
    for (k, v) in extra {
        request = request.header(*k, *v);
    }
    let response = request.body(body).send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

/// Raw HTTP: a well-formed `tools/list`, to show the server still serves.
pub async fn still_serves(url: &str) {
    let body = json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {"_meta": request_meta(false)}});
    let (status, reply) = post_raw(url, body.to_string(), &[("Mcp-Method", "tools/list")]).await;
    assert_eq!(status, 200, "{reply}");
    assert!(reply["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{reply}");
}
