//! [`Durable<H>`]: your rmcp `ServerHandler` with durable task tools added.
//!
//! It answers what durable tasks own — `tools/call` of a durable tool,
//! `tasks/get|update|cancel`, the tasks capability in `get_info`,
//! `initialize` and `server/discover`, and the durable tools' entries in
//! `tools/list` — and forwards every other method to `H` untouched, so
//! `#[tool_router]` tools, prompts, resources and completions keep working
//! exactly as before.

#![allow(deprecated)] // `subscribe`/`unsubscribe` are forwarded like everything else.

use std::borrow::Cow;
use std::future::Future;

use rmcp::model::*;
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData as McpError, ServerHandler};

use crate::durable::DurableTasks;
use crate::list_cache::CachingHints;

/// An rmcp `ServerHandler` `H` with the durable tools of a [`DurableTasks`].
///
/// Build it per request in rmcp's service factory, around the handler you
/// already serve:
///
/// ```no_run
/// # use std::sync::Arc;
/// # use mcp_tasks_server::DurableTasks;
/// # use rmcp::transport::streamable_http_server::{StreamableHttpService, StreamableHttpServerConfig};
/// # use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
/// # #[derive(Clone, Default)] struct MyServer;
/// # impl rmcp::ServerHandler for MyServer {}
/// # async fn demo(tasks: DurableTasks) {
/// let service: StreamableHttpService<_, LocalSessionManager> = StreamableHttpService::new(
///     move || Ok(tasks.wrap(MyServer::default())),
///     Default::default(),
///     StreamableHttpServerConfig::default().with_legacy_session_mode(false),
/// );
/// # }
/// ```
///
/// A durable tool shadows a tool of `H` with the same name (call and
/// listing). `H`'s own `get_info`, `initialize` and `server/discover` run
/// and get the tasks extension added to their capabilities.
#[derive(Clone)]
pub struct Durable<H> {
    handler: H,
    tasks: DurableTasks,
}

impl<H: std::fmt::Debug> std::fmt::Debug for Durable<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durable").field("handler", &self.handler).field("tasks", &self.tasks).finish()
    }
}

impl<H: ServerHandler> Durable<H> {
    /// `handler` with `tasks`' durable tools added.
    pub fn new(handler: H, tasks: DurableTasks) -> Self {
        Durable { handler, tasks }
    }

    /// The wrapped handler.
    pub fn inner(&self) -> &H {
        &self.handler
    }

    /// The durable tools.
    pub fn tasks(&self) -> &DurableTasks {
        &self.tasks
    }
}

impl<H: ServerHandler> ServerHandler for Durable<H> {
    // ---- owned (or amended) here ----

    fn get_info(&self) -> ServerConfig {
        let mut info = self.handler.get_info();
        self.tasks.advertise(&mut info.capabilities);
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let mut result = self.handler.initialize(request, context).await?;
        self.tasks.advertise(&mut result.capabilities);
        Ok(result)
    }

    fn negotiate_initialize(&self, request: &InitializeRequestParams) -> Result<InitializeResult, McpError> {
        let mut result = self.handler.negotiate_initialize(request)?;
        self.tasks.advertise(&mut result.capabilities);
        Ok(result)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let mut result = self.handler.discover(context).await?;
        self.tasks.advertise(&mut result.capabilities);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if self.tasks.owns(&request.name) {
            self.tasks.call_tool(request, &context).await
        } else {
            self.handler.call_tool(request, context).await
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut result = match self.handler.list_tools(request, context).await {
            Ok(result) => result,
            // A handler without tools of its own (prompts and resources only).
            Err(e) if e.code == ErrorCode::METHOD_NOT_FOUND => ListToolsResult::default(),
            Err(e) => return Err(e),
        };
        let last_page = result.next_cursor.is_none();
        result.tools = self.tasks.merge_listing(std::mem::take(&mut result.tools), last_page);
        // SEP-2549: every tools/list carries caching hints; H's own win.
        CachingHints::NOT_CACHEABLE.fill(&mut result.ttl_ms, &mut result.cache_scope);
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tasks.tool(name).or_else(|| self.handler.get_tool(name))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.tasks.get_task(request, &context).await
    }

    async fn update_task(&self, request: UpdateTaskParams, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.tasks.update_task(request, &context).await
    }

    async fn cancel_task(&self, request: CancelTaskParams, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.tasks.cancel_task(request, &context).await
    }

    // ---- forwarded untouched ----

    fn ping(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.handler.ping(context)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.handler.supported_protocol_versions()
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.complete(request, context)
    }

    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.handler.set_level(request, context)
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, McpError>> + MaybeSendFuture + '_ {
        self.handler.get_prompt(request, context)
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.list_prompts(request, context)
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.list_resources(request, context)
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.list_resource_templates(request, context)
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, McpError>> + MaybeSendFuture + '_ {
        self.handler.read_resource(request, context)
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.handler.accepted_subscription_filter(requested)
    }

    fn listen(&self, context: SubscriptionContext) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.handler.listen(context)
    }

    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.handler.subscribe(request, context)
    }

    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.handler.unsubscribe(request, context)
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.on_custom_request(request, context)
    }

    fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_cancelled(notification, context)
    }

    fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_progress(notification, context)
    }

    fn on_initialized(&self, context: NotificationContext<RoleServer>) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_initialized(context)
    }

    fn on_roots_list_changed(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_roots_list_changed(context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_custom_notification(notification, context)
    }

    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListSkillsResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.list_skills(request, context)
    }

    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetSkillResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.get_skill(request, context)
    }

    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceDirectoryResult, McpError>> + MaybeSendFuture + '_ {
        self.handler.read_resource_directory(request, context)
    }
}

impl DurableTasks {
    /// `handler` with these durable tools added: see [`Durable`].
    pub fn wrap<H: ServerHandler>(&self, handler: H) -> Durable<H> {
        Durable::new(handler, self.clone())
    }
}
