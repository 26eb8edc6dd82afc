// Run with: cargo run -p mcp-tasks-server --example durable_task_demo -- --listen 127.0.0.1:8080 --db task-demo.db
//
//! rmcp's task demo server — `slow_sum` runs as a task for clients that
//! declare the tasks extension and inline for the others, `quick_echo` is a
//! plain tool — with rmcp's in-memory `TaskManager` replaced by durable
//! tasks: `slow_sum` survives a restart, `tasks/*` and the capability come
//! from mcp-tasks. docs/rmcp-task-demo.md shows the diff.

use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use mcp_tasks_server::{DurableTasks, TaskContext, ToolFailure, TypedTool};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::schemars::JsonSchema;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
struct SumArgs {
    a: i32,
    b: i32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    message: String,
}

#[derive(Clone)]
struct TaskDemo {
    tool_router: ToolRouter<TaskDemo>,
}

#[tool_router]
impl TaskDemo {
    fn new() -> Self {
        TaskDemo { tool_router: Self::tool_router() }
    }

    /// A plain tool, answered in the request.
    #[tool(description = "Echo a message back immediately")]
    async fn quick_echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(message)]))
    }
}

/// The long-running tool, now a durable task: `ctx.sleep` ends early on
/// `tasks/cancel`, and a restart re-runs it.
async fn slow_sum(SumArgs { a, b }: SumArgs, ctx: TaskContext) -> Result<CallToolResult, ToolFailure> {
    ctx.sleep(Duration::from_secs(2)).await?;
    Ok(CallToolResult::success(vec![ContentBlock::text((a + b).to_string())]))
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TaskDemo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "Task demo server. `slow_sum` runs as a durable task for clients that declare the tasks extension.".to_owned(),
        )
    }
}

fn arg(name: &str) -> Option<String> {
    let mut args = std::env::args().skip_while(|a| a != name);
    args.next().and_then(|_| args.next())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listen = arg("--listen").unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let db = arg("--db").unwrap_or_else(|| "task-demo.db".to_owned());

    let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open_with(db, mcp_tasks_sqlite::SqliteOptions::serving())?);
    let tasks = DurableTasks::builder(store)
        .single_node(true)
        .typed_tool(TypedTool::new("slow_sum", "Sum two numbers after a 2-second delay", slow_sum).task_optional())
        .build()?;
    tasks.start().await?;

    let service: StreamableHttpService<_, LocalSessionManager> = StreamableHttpService::new(
        {
            let tasks = tasks.clone();
            move || Ok(tasks.wrap(TaskDemo::new()))
        },
        Default::default(),
        StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true),
    );
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, axum::Router::new().nest_service("/mcp", service))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    tasks.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
