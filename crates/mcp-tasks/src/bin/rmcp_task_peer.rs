//! `rmcp-task-peer`: the peer `mcp-tasks bench` measures against — rmcp's own
//! in-memory `TaskManager` behind rmcp's stateless Streamable HTTP service,
//! serving the benchmark's fixture tool as `mcp-tasks serve --tools fleet`
//! does, so both answer the same requests.
//!
//! - `counted_job {ms}` is a task that sleeps `ms` milliseconds (default
//!   1000) and completes with a text result, honouring `tasks/cancel`.
//!
//! It holds nothing durable (a restart loses every task) and sweeps its whole
//! task map under one lock on every call: it is what a user would otherwise
//! pick, not a store. It logs `listening on http://ADDR/mcp` on stderr, the
//! line `mcp-tasks serve` logs, so one reader finds either URL.
//!
//! ```sh
//! rmcp-task-peer --listen 127.0.0.1:0
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, CreateTaskResult, ErrorCode,
    GetTaskParams, GetTaskResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};

/// The allocator `mcp-tasks` runs with, so a ratio between the two compares
/// the servers, not their allocators.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The in-memory peer of `mcp-tasks bench`: rmcp's `TaskManager` over HTTP.
#[derive(Debug, Parser)]
#[command(name = "rmcp-task-peer", version, about, long_about = None)]
struct Args {
    /// Address to listen on (port 0: any free port; the log line says which).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
}

/// One handler per request (stateless mode); every clone shares the manager.
#[derive(Clone)]
struct Peer {
    tasks: TaskManager,
    tools: Arc<Vec<Tool>>,
}

impl Peer {
    fn new() -> Peer {
        let schema = json!({
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0, "description": "How long it works (default 1000)"}}
        });
        let Value::Object(schema) = schema else { unreachable!("a JSON object literal") };
        let counted_job = Tool::new("counted_job", "Works for `ms` milliseconds (benchmark fixture).", schema);
        Peer { tasks: TaskManager::new(), tools: Arc::new(vec![counted_job]) }
    }
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    // rmcp checks a call's arguments against the schema of the tool named here,
    // as `mcp-tasks serve` checks its own: both pay for validation.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != "counted_job" {
            return Err(McpError::invalid_params(format!("unknown tool {:?}", request.name), None));
        }
        if !context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
            return Err(McpError::new(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "counted_job runs only as a task: declare the tasks extension",
                None,
            ));
        }
        let ms = request.arguments.as_ref().and_then(|a| a.get("ms")).and_then(Value::as_u64).unwrap_or(1000);
        let task = self.tasks.spawn(TaskOptions::new(), move |ctx| {
            Box::pin(async move {
                tokio::select! {
                    _ = ctx.cancelled() => Err(TaskExit::Cancelled),
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                        Ok(CallToolResult::success(vec![ContentBlock::text(format!("worked {ms} ms"))]))
                    }
                }
            })
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(&self, request: UpdateTaskParams, _context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(&self, request: CancelTaskParams, _context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let args = Args::parse();
    let peer = Peer::new();
    let service: StreamableHttpService<Peer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(peer.clone()),
        Default::default(),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let addr = listener.local_addr()?;
    // Without TCP_NODELAY every reply waits on Nagle's algorithm (≈ 40 ms):
    // the peer would be measured at a fraction of what it does.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    eprintln!("rmcp-task-peer listening on http://{addr}/mcp (rmcp TaskManager, in memory)");
    axum::serve(listener, router).with_graceful_shutdown(stop_signal()).await
}
