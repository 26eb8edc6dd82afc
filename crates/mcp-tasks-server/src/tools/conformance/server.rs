//! [`ConformanceServer`]: the fixture server of the official conformance
//! suite, written as any rmcp server is — `#[tool_router]` tools,
//! `#[prompt_router]` prompts, resources, completions, its own `get_info` —
//! with the durable task tools added the documented way
//! ([`TaskServerBuilder::handler`](crate::TaskServerBuilder::handler), i.e.
//! [`Durable`](crate::Durable)). So the suite also shows that adding
//! mcp-tasks to a conformant rmcp server keeps it conformant.

use std::time::Duration;

use rmcp::handler::server::prompt::PromptContext;
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};

use super::prompts::ASKING_PROMPT;
use super::resources;
use crate::durable::DurableTasks;
use crate::list_cache::CachingHints;

/// How long the fixed lists and resources may be cached, by anyone.
const FIXED: Duration = Duration::from_secs(60);

/// The conformance fixtures' rmcp handler.
#[derive(Clone)]
pub struct ConformanceServer {
    pub(crate) tasks: DurableTasks,
    tool_router: ToolRouter<ConformanceServer>,
    prompt_router: PromptRouter<ConformanceServer>,
}

impl std::fmt::Debug for ConformanceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConformanceServer").finish_non_exhaustive()
    }
}

impl ConformanceServer {
    /// The handler; `tasks` starts the fronted task and seals `requestState`.
    pub fn new(tasks: &DurableTasks) -> Self {
        // `greet` first: the header-validation scenario calls the first listed tool with `{}`.
        let tool_router = Self::content_router() + Self::mrtr_router();
        ConformanceServer { tasks: tasks.clone(), tool_router, prompt_router: Self::prompt_router() }
    }
}

impl ServerHandler for ConformanceServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities =
            ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().enable_completions().build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("mcp-tasks-conformance", env!("CARGO_PKG_VERSION")))
            .with_instructions("The official MCP conformance suite's fixtures, with durable task tools.".to_owned())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let hints = CachingHints::public(FIXED);
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all())
            .with_ttl_ms(hints.ttl_ms)
            .with_cache_scope(hints.scope))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.tool_router.call(ToolCallContext::new(self, request, cx)).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let mut prompts = self.prompt_router.list_all();
        prompts.push(Self::asking_prompt());
        let hints = CachingHints::public(FIXED);
        Ok(ListPromptsResult::with_all_items(prompts).with_ttl_ms(hints.ttl_ms).with_cache_scope(hints.scope))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name == ASKING_PROMPT {
            return self.get_prompt_asking(&request, &cx);
        }
        let context = PromptContext::new(self, request.name, request.arguments, cx);
        self.prompt_router.get_prompt(context).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let hints = CachingHints::public(FIXED);
        Ok(ListResourcesResult::with_all_items(resources::resources())
            .with_ttl_ms(hints.ttl_ms)
            .with_cache_scope(hints.scope))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let hints = CachingHints::public(FIXED);
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates())
            .with_ttl_ms(hints.ttl_ms)
            .with_cache_scope(hints.scope))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let mut result = resources::read(&request.uri)?;
        let hints = CachingHints::public(FIXED);
        hints.fill(&mut result.ttl_ms, &mut result.cache_scope);
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        resources::complete(&request.r#ref, &request.argument)
    }
}
