//! An rmcp server written the rmcp way (`#[tool_router]` tools, a
//! `#[prompt_router]` prompt, a resource, its own `get_info`), durable tasks
//! added the documented way (`DurableTasks::wrap`), served over real HTTP on
//! loopback, and real rmcp clients for it.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_server::{DurableTasks, TaskContext, ToolFailure, TypedTool};
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ErrorData, GetTaskParams, GetTaskResult,
    Implementation, ListResourcesResult, PaginatedRequestParams, PromptMessage, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::{RequestContext, RoleServer, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{
    ClientLifecycleMode, ClientServiceExt, ErrorData as McpError, Json, RoleClient, ServerHandler, ServiceError, prompt,
    prompt_handler, prompt_router, tool, tool_handler, tool_router,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
pub struct SummarizeArgs {
    text: String,
}

/// The application's own handler, as it was before durable tasks.
#[derive(Clone)]
pub struct Notes {
    tool_router: ToolRouter<Notes>,
    prompt_router: PromptRouter<Notes>,
}

#[tool_router]
impl Notes {
    pub fn new() -> Self {
        Notes { tool_router: Self::tool_router(), prompt_router: Self::prompt_router() }
    }

    #[tool(description = "Adds two integers")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Always fails, as a tool error")]
    async fn broken(&self) -> Result<String, McpError> {
        Err(McpError::internal_error("broken on purpose", None))
    }
}

#[prompt_router]
impl Notes {
    #[prompt(name = "summarize", description = "Asks for a summary of a text")]
    async fn summarize(&self, Parameters(args): Parameters<SummarizeArgs>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, format!("Summarise: {}", args.text))]
    }
}

pub const README_URI: &str = "notes://readme";

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build())
            .with_server_info(Implementation::new("notes", "1.0.0"))
            .with_instructions("notes for tests".to_owned())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(README_URI, "readme")]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != README_URI {
            return Err(McpError::resource_not_found(format!("no resource {}", request.uri), None));
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text("Notes keeps notes.", README_URI)]).into())
    }
}

/// Arguments of the typed durable tool: a range and no unknown fields.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportArgs {
    pub topic: String,
    #[schemars(range(min = 1, max = 20))]
    pub sections: u32,
}

/// Its typed result.
#[derive(Serialize, JsonSchema)]
pub struct Report {
    pub topic: String,
    pub sections: Vec<String>,
}

async fn build_report(args: ReportArgs, ctx: TaskContext) -> Result<Json<Report>, ToolFailure> {
    ctx.set_status_message("writing").await?;
    let sections = (1..=args.sections).map(|n| format!("{}: section {n}", args.topic)).collect();
    Ok(Json(Report { topic: args.topic, sections }))
}

/// The durable tools added to `Notes`: `build_report` (typed) over a SQLite file in `dir`.
pub fn durable_tasks(dir: &std::path::Path) -> DurableTasks {
    let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open(dir.join("tasks.db")).unwrap());
    DurableTasks::builder(store)
        .single_node(true)
        .runtime(|r| r.claim_interval(Duration::from_millis(10)))
        .typed_tool(TypedTool::new("build_report", "Writes a report", build_report).task_optional())
        .build()
        .unwrap()
}

/// Serves `make()`'s handler per request at `http://127.0.0.1:PORT/mcp`, the
/// way the examples do; returns the URL.
pub async fn serve<H: ServerHandler>(make: impl Fn() -> H + Send + Sync + 'static) -> String {
    let service: StreamableHttpService<H, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(make()),
        Default::default(),
        StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, axum::Router::new().nest_service("/mcp", service)).await.unwrap();
    });
    url
}

pub type Client = RunningService<RoleClient, ClientConfig>;

/// A real rmcp client on protocol 2026-07-28; `tasks`: it declares the tasks
/// extension and form elicitation (it answers a task's questions).
pub async fn client(url: &str, tasks: bool) -> Client {
    let caps = if tasks {
        serde_json::from_value(serde_json::json!({
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "elicitation": {"form": {}}
        }))
        .unwrap()
    } else {
        ClientCapabilities::default()
    };
    let transport =
        StreamableHttpClientTransport::from_config(StreamableHttpClientTransportConfig::with_uri(url.to_owned()));
    let info = ClientConfig::new(caps, Implementation::new("drop-in-tests", "0"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    info.serve_with_lifecycle(transport, lifecycle).await.unwrap()
}

/// One `tools/call`, no MRTR driving.
pub async fn call(client: &Client, tool: &str, arguments: Value) -> Result<CallToolResponse, ErrorData> {
    let params =
        CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments.as_object().cloned().unwrap_or_default());
    client.call_tool_once(params).await.map_err(mcp_error)
}

/// `tasks/get`.
pub async fn get(client: &Client, id: &str) -> Result<GetTaskResult, ErrorData> {
    client.peer().get_task(GetTaskParams::new(id.to_owned())).await.map_err(mcp_error)
}

/// The JSON-RPC error inside a service error.
pub fn mcp_error(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The wire form of anything.
pub fn wire(v: &impl Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

/// The wire form of a `tools/call` answer, whichever kind it is.
pub fn response_wire(response: &CallToolResponse) -> Value {
    match response {
        CallToolResponse::Complete(result) => wire(result),
        CallToolResponse::InputRequired(result) => wire(result),
        CallToolResponse::Task(task) => wire(task),
        other => panic!("an answer this test does not know: {other:?}"),
    }
}
