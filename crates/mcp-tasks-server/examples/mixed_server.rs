// Run with: cargo run -p mcp-tasks-server --example mixed_server -- --listen 127.0.0.1:8080 --db mixed-server.db
//
//! An rmcp server written the rmcp way — `#[tool_router]` tools, a
//! `#[prompt_router]` prompt, a resource and its own `get_info` — with two
//! durable task tools added by wrapping the handler (`tasks.wrap(Notes::new())`):
//!
//! - `build_report` (typed arguments with a range and no unknown fields,
//!   typed structured result) runs for `sections × ms_per_section`;
//! - `approve_deploy` asks the client for an approval (`input_required`)
//!   and finishes with the answer.
//!
//! Everything else — `add`, `echo`, the `summarize` prompt, the
//! `notes://readme` resource — is plain rmcp, untouched. Kill the process
//! (even `kill -9`) while `build_report` runs and start it again: the task
//! resumes and completes.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use mcp_tasks_server::{DurableTasks, TaskContext, ToolFailure, TypedTool};
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{
    ErrorData as McpError, Json, ServerHandler, prompt, prompt_handler, prompt_router, tool, tool_handler, tool_router,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

// ---- the existing rmcp server: plain tools, a prompt, a resource ----

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    message: String,
}

#[derive(Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// What to summarise.
    text: String,
}

/// The server as it was before durable tasks.
#[derive(Clone)]
struct Notes {
    tool_router: ToolRouter<Notes>,
    prompt_router: PromptRouter<Notes>,
}

#[tool_router]
impl Notes {
    fn new() -> Self {
        Notes { tool_router: Self::tool_router(), prompt_router: Self::prompt_router() }
    }

    #[tool(description = "Adds two integers")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Echoes a message back")]
    async fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        message
    }
}

#[prompt_router]
impl Notes {
    #[prompt(name = "summarize", description = "Asks for a summary of a text")]
    async fn summarize(&self, Parameters(args): Parameters<SummarizeArgs>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, format!("Summarise in one sentence: {}", args.text))]
    }
}

const README_URI: &str = "notes://readme";

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build())
            .with_server_info(Implementation::new("notes", "1.0.0"))
            .with_instructions("Notes: plain tools, a prompt, a resource and two durable tasks.".to_owned())
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

// ---- the durable task tools ----

/// Arguments of `build_report`: checked before a task is created.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReportArgs {
    /// What the report is about.
    topic: String,
    /// How many sections (1 to 20).
    #[schemars(range(min = 1, max = 20))]
    sections: u32,
    /// How long each section takes, in milliseconds (default 1000).
    #[serde(default)]
    ms_per_section: Option<u64>,
}

/// The structured result of `build_report`.
#[derive(Serialize, JsonSchema)]
struct Report {
    topic: String,
    sections: Vec<String>,
    /// Which attempt finished it (2 after a crash and a restart).
    attempt: u32,
}

async fn build_report(args: ReportArgs, ctx: TaskContext) -> Result<Json<Report>, ToolFailure> {
    let pause = Duration::from_millis(args.ms_per_section.unwrap_or(1000));
    let mut sections = Vec::new();
    for n in 1..=args.sections {
        ctx.set_status_message(format!("writing section {n} of {}", args.sections)).await?;
        ctx.sleep(pause).await?;
        sections.push(format!("{}: section {n}", args.topic));
    }
    Ok(Json(Report { topic: args.topic, sections, attempt: ctx.attempt() }))
}

#[derive(Deserialize, JsonSchema)]
struct DeployArgs {
    /// The service to deploy.
    service: String,
}

async fn approve_deploy(args: DeployArgs, ctx: TaskContext) -> Result<String, ToolFailure> {
    let question = json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": format!("Deploy {}?", args.service),
            "requestedSchema": {
                "type": "object",
                "properties": {"approve": {"type": "boolean"}},
                "required": ["approve"]
            }
        }
    });
    let answers = ctx.request_input([("approval".to_owned(), question)].into()).await?;
    let approved =
        answers["approval"]["action"] == "accept" && answers["approval"]["content"]["approve"] == Value::Bool(true);
    Ok(if approved { format!("{} deployed", args.service) } else { format!("{} not deployed", args.service) })
}

// ---- serving ----

fn arg(name: &str) -> Option<String> {
    let mut args = std::env::args().skip_while(|a| a != name);
    args.next().and_then(|_| args.next())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listen: SocketAddr = arg("--listen").unwrap_or_else(|| "127.0.0.1:8080".to_owned()).parse()?;
    let db = PathBuf::from(arg("--db").unwrap_or_else(|| "mixed-server.db".to_owned()));

    // Once per process: the store, the durable tools, the runtime.
    let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open_with(&db, mcp_tasks_sqlite::SqliteOptions::serving())?);
    let tasks = DurableTasks::builder(store)
        .single_node(true)
        .typed_tool(
            TypedTool::new("build_report", "Writes a report, one section at a time", build_report)
                .expected_duration(Duration::from_secs(5)),
        )
        .task("approve_deploy", "Deploys a service once the user approves", approve_deploy)
        .build()?;
    tasks.start().await?;

    // Per request (stateless HTTP): the rmcp handler, wrapped.
    let service: StreamableHttpService<_, LocalSessionManager> = StreamableHttpService::new(
        {
            let tasks = tasks.clone();
            move || Ok(tasks.wrap(Notes::new()))
        },
        Default::default(),
        StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    // axum leaves Nagle on; rmcp's small chunked replies would stall ~40 ms each.
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    tasks.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
