//! [`TaskServer`]: durable task tools behind an MCP endpoint, configured with
//! [`TaskServerBuilder`].

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use mcp_tasks_core::{Clock, Policy, SystemClock};
use mcp_tasks_runtime::{CompiledSchema, Runtime, RuntimeBuilder, RuntimeError, TaskContext, TaskTool, ToolFailure};
use mcp_tasks_store::TaskStore;
use rmcp::model::{Implementation, Tool};
use rmcp::schemars::JsonSchema;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::auth::TokenMap;
use crate::body_budget::BodyBudget;
use crate::custom_handler::Mount;
use crate::durable::{DurableTasks, DurableTasksBuilder};
use crate::durable_handler::Durable;
use crate::fast_create::FastCreate;
use crate::fast_get::FastGet;
use crate::fast_path::HandlerTraits;
use crate::guard::{GuardConfig, guard};
use crate::handler::{Shared, TaskHandler};
use crate::inline::InlineTool;
use crate::limits::ConnectionLimits;
use crate::metrics::{Collector, ServerMetrics, time_requests};
use crate::rate_limit::PollLimiter;
use crate::server_error::ServerError;
use crate::shared_service::SharedService;
use crate::typed::{IntoTaskResult, TypedTool};

/// `Origin` values accepted by default: pages served from this machine
/// (any port). A browser page from anywhere else gets 403.
pub const DEFAULT_ALLOWED_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// Default largest request body: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Default time running handlers get to finish at shutdown before their
/// leases are released for the next start to resume.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The path the MCP endpoint is mounted at.
pub const MCP_PATH: &str = "/mcp";

enum Registration {
    Task(String),
    Inline(Arc<dyn InlineTool>),
}

/// Configures a [`TaskServer`].
pub struct TaskServerBuilder {
    tasks: DurableTasksBuilder,
    order: Vec<Registration>,
    max_body_bytes: usize,
    tokens: Option<Arc<TokenMap>>,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Option<Vec<String>>,
    limits: ConnectionLimits,
    server_info: Implementation,
    instructions: Option<String>,
    shutdown_grace: Duration,
    /// Kept for the poll limiter (the runtime gets it too).
    clock: Option<Arc<dyn Clock>>,
    metrics: ServerMetrics,
    metrics_endpoint: bool,
    max_polls_per_second: Option<NonZeroU32>,
    /// A handler of the user's own instead of the inline tools' handler.
    handler: Option<Mount>,
    /// Whether `tasks/get` may be answered ahead of rmcp ([`fast_get`](crate::fast_get)).
    fast_get: bool,
    /// Whether a durable tool's `tools/call` may be answered ahead of rmcp ([`fast_create`](crate::fast_create)).
    fast_create: bool,
}

impl std::fmt::Debug for TaskServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskServerBuilder").field("tasks", &self.tasks).finish_non_exhaustive()
    }
}

impl TaskServerBuilder {
    /// Adds a durable task tool.
    pub fn tool(self, tool: impl TaskTool) -> Self {
        self.tool_arc(Arc::new(tool))
    }

    /// Adds a durable task tool already behind an `Arc`.
    pub fn tool_arc(mut self, tool: Arc<dyn TaskTool>) -> Self {
        self.order.push(Registration::Task(tool.spec().name));
        self.tasks = self.tasks.tool_arc(tool);
        self
    }

    /// Adds a durable tool that the [`handler`](Self::handler)'s own tool of
    /// the same name starts (see [`DurableTasksBuilder::fronted_tool`]).
    pub fn fronted_tool(mut self, tool: impl TaskTool) -> Self {
        self.tasks = self.tasks.fronted_tool(tool);
        self
    }

    /// Adds a typed durable tool (see [`DurableTasksBuilder::typed_tool`]).
    pub fn typed_tool<A, F, Fut, R>(mut self, tool: TypedTool<A, F>) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
        R: IntoTaskResult,
    {
        self.order.push(Registration::Task(mcp_tasks_runtime::TaskTool::spec(&tool).name));
        self.tasks = self.tasks.typed_tool(tool);
        self
    }

    /// Adds a typed durable tool in one line (see [`DurableTasksBuilder::task`]).
    pub fn task<A, F, Fut, R>(self, name: impl Into<String>, description: impl Into<String>, run: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
        R: IntoTaskResult,
    {
        self.typed_tool(TypedTool::new(name, description, run))
    }

    /// Adds a tool that answers within the request. Sharing a task tool's
    /// name makes it that task's front (it may gather input, then start it).
    pub fn inline_tool(mut self, tool: impl InlineTool) -> Self {
        self.order.push(Registration::Inline(Arc::new(tool)));
        self
    }

    /// The server's policy (validated when built).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.tasks = self.tasks.policy(policy);
        self
    }

    /// The clock every decision reads (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock.clone());
        self.tasks = self.tasks.clock(clock);
        self
    }

    /// Whether this is the only process on its store (embedded SQLite).
    pub fn single_node(mut self, yes: bool) -> Self {
        self.tasks = self.tasks.single_node(yes);
        self
    }

    /// Any other runtime setting (concurrency, claim interval, jitter seed, …).
    pub fn runtime(mut self, configure: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder) -> Self {
        self.tasks = self.tasks.runtime(configure);
        self
    }

    /// Largest request body accepted (default [`DEFAULT_MAX_BODY_BYTES`]).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Requires a bearer token on every request; tasks are bound to the
    /// token's principal.
    pub fn auth(mut self, tokens: TokenMap) -> Self {
        self.tokens = Some(Arc::new(tokens));
        self
    }

    /// `Host` values accepted (DNS-rebinding protection; default: loopback names only).
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// `Origin` values accepted from browsers (default
    /// [`DEFAULT_ALLOWED_ORIGINS`]): a request with another `Origin` gets 403;
    /// one without `Origin` (not a browser) is not affected. Entries are
    /// `scheme://host[:port]`, where port `*` matches any, or `null`.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Timeouts, the connection limit and the body bytes allowed in flight
    /// (default [`ConnectionLimits::default`]).
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How the server names itself in `server/discover`.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.server_info = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's model, in `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Serves your own rmcp `ServerHandler` — `#[tool_router]` tools,
    /// prompts, resources, completions, its `get_info` — with this
    /// builder's durable tools added ([`Durable`]), behind this server's
    /// guard, limits and probes. `make` builds it once, given the durable
    /// tools (to start a fronted task or seal a `requestState`); every
    /// request gets a clone. Inline tools cannot be added then: the handler
    /// serves its own tools.
    pub fn handler<H, F>(mut self, make: F) -> Self
    where
        H: rmcp::ServerHandler + Clone,
        F: Fn(&DurableTasks) -> H + Send + Sync + 'static,
    {
        self.handler = Some(crate::custom_handler::mount(make));
        self
    }

    /// The key that seals the `requestState` of multi-round-trip answers
    /// (see [`DurableTasksBuilder::request_state_key`]); a fleet shares one.
    pub fn request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.tasks = self.tasks.request_state_key(key);
        self
    }

    /// How long running handlers get at shutdown (default [`DEFAULT_SHUTDOWN_GRACE`]).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Whether `GET /metrics` is served (default yes; outside the bearer
    /// guard, like the probes — see [`crate::metrics`]). The counts are kept
    /// either way ([`TaskServer::metrics`]).
    pub fn metrics_endpoint(mut self, serve: bool) -> Self {
        self.metrics_endpoint = serve;
        self
    }

    /// Runs `collect` at each scrape, before rendering: for values read off
    /// the store itself, such as a SQLite store's group-commit totals
    /// ([`mcp_tasks_runtime::Metrics::group_commits`]).
    pub fn metrics_collector(mut self, collect: impl Fn(&mcp_tasks_runtime::Metrics) + Send + Sync + 'static) -> Self {
        let collect: Collector = Arc::new(collect);
        self.metrics.add_collector(collect);
        self
    }

    /// Limits `tasks/get` to `per_second` per principal (default: no
    /// limit). Beyond it a poll gets HTTP 429 with `Retry-After` and the
    /// JSON-RPC error [`POLL_RATE_LIMITED`](crate::rate_limit::POLL_RATE_LIMITED);
    /// the limit is counted on the server's clock.
    pub fn max_polls_per_second(mut self, per_second: Option<NonZeroU32>) -> Self {
        self.max_polls_per_second = per_second;
        self
    }

    /// Whether a plain `tasks/get` is answered ahead of rmcp, by the same
    /// code and with the same bytes, at a fraction of the cost (default: on;
    /// see [`fast_get`](crate::fast_get)). Off, every request goes through
    /// rmcp's service — what the differential test compares against.
    pub fn fast_get(mut self, on: bool) -> Self {
        self.fast_get = on;
        self
    }

    /// Whether a plain `tools/call` creating a durable task is answered
    /// ahead of rmcp, by the same code and with the same bytes, at a
    /// fraction of the cost (default: on; see [`fast_create`](crate::fast_create)).
    /// Off, every creation goes through rmcp's service — what the
    /// differential test compares against. Independent of [`fast_get`](Self::fast_get).
    pub fn fast_create(mut self, on: bool) -> Self {
        self.fast_create = on;
        self
    }

    /// Builds the runtime (validating the policy) and the tool routes.
    pub fn build(self) -> Result<TaskServer, ServerError> {
        if let Some(problem) = self.limits.problem(self.max_body_bytes) {
            return Err(ServerError::Limits(problem));
        }
        if self.handler.is_some()
            && let Some(Registration::Inline(tool)) = self.order.iter().find(|r| matches!(r, Registration::Inline(_)))
        {
            return Err(ServerError::Tool {
                tool: tool.definition().name.to_string(),
                reason: "inline tools need the built-in handler; a server given its own handler() serves its own tools"
                    .into(),
            });
        }
        let task_names: HashSet<&str> = self
            .order
            .iter()
            .filter_map(|r| match r {
                Registration::Task(name) => Some(name.as_str()),
                Registration::Inline(_) => None,
            })
            .collect();
        // A task fronted by an inline tool of the same name is answered by the front.
        let mut tasks = self.tasks;
        for registration in &self.order {
            if let Registration::Inline(tool) = registration {
                let name = tool.definition().name.to_string();
                if task_names.contains(name.as_str()) {
                    tasks = tasks.fronted(name);
                }
            }
        }
        let runtime_metrics = self.metrics.runtime_metrics().clone();
        let tasks = tasks.runtime(|r| r.metrics(runtime_metrics)).build()?;
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let poll_limit = self.max_polls_per_second.map(|per_second| PollLimiter::new(per_second, clock));
        let mut routes = HashMap::new();
        let mut listing = Vec::new();
        let mut task_listed = HashSet::new();
        for registration in self.order {
            match registration {
                Registration::Inline(tool) => {
                    let definition = tool.definition();
                    let name = definition.name.to_string();
                    if routes.contains_key(&name) {
                        return Err(ServerError::Tool { tool: name, reason: "registered twice".into() });
                    }
                    let schema = serde_json::Value::Object((*definition.input_schema).clone());
                    let schema = CompiledSchema::compile(&schema)
                        .map_err(|reason| RuntimeError::InvalidToolSchema { tool: name.clone(), reason })?;
                    listing.retain(|t: &Tool| t.name != definition.name);
                    listing.push(definition);
                    routes.insert(name, (tool, Arc::new(schema)));
                }
                Registration::Task(name) => {
                    // A task fronted by an inline tool of the same name is listed once, as the front.
                    if !routes.contains_key(&name)
                        && task_listed.insert(name.clone())
                        && let Some(definition) = tasks.tool(&name)
                    {
                        listing.push(definition);
                    }
                }
            }
        }
        let stop = tasks.stop_token().clone();
        let shared =
            Arc::new(Shared { tasks, routes, listing, server_info: self.server_info, instructions: self.instructions });
        Ok(TaskServer {
            shared,
            guard: Arc::new(GuardConfig {
                max_body_bytes: self.max_body_bytes,
                tokens: self.tokens,
                body_timeout: self.limits.body_timeout,
                budget: BodyBudget::new(self.limits.max_body_bytes_in_flight),
                poll_limit,
                metrics: Some(self.metrics.clone()),
                fast_get: None,
                fast_create: None,
            }),
            fast_get: self.fast_get,
            fast_get_answers: Arc::default(),
            fast_create: self.fast_create,
            fast_create_answers: Arc::default(),
            metrics: self.metrics,
            metrics_endpoint: self.metrics_endpoint,
            allowed_hosts: self.allowed_hosts,
            allowed_origins: self.allowed_origins.unwrap_or_else(|| DEFAULT_ALLOWED_ORIGINS.map(str::to_owned).to_vec()),
            limits: self.limits,
            shutdown_grace: self.shutdown_grace,
            stop,
            handler: self.handler,
        })
    }
}

/// An MCP server whose task tools run as durable tasks. Cheap to clone.
#[derive(Clone)]
pub struct TaskServer {
    shared: Arc<Shared>,
    guard: Arc<GuardConfig>,
    metrics: ServerMetrics,
    metrics_endpoint: bool,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Vec<String>,
    pub(crate) limits: ConnectionLimits,
    pub(crate) shutdown_grace: Duration,
    pub(crate) stop: CancellationToken,
    handler: Option<Mount>,
    fast_get: bool,
    fast_get_answers: Arc<std::sync::atomic::AtomicU64>,
    fast_create: bool,
    fast_create_answers: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for TaskServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskServer").field("tools", &self.shared.listing.len()).finish_non_exhaustive()
    }
}

impl TaskServer {
    /// A builder over `store`; the runtime and all request handlers share it.
    pub fn builder(store: Arc<dyn TaskStore>) -> TaskServerBuilder {
        TaskServerBuilder {
            tasks: DurableTasks::builder(store),
            order: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            tokens: None,
            allowed_hosts: None,
            allowed_origins: None,
            limits: ConnectionLimits::default(),
            server_info: Implementation::new("mcp-tasks", env!("CARGO_PKG_VERSION")),
            instructions: None,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            clock: None,
            metrics: ServerMetrics::new(),
            metrics_endpoint: true,
            max_polls_per_second: None,
            handler: None,
            fast_get: true,
            fast_create: true,
        }
    }

    /// This server's metrics (what `GET /metrics` renders).
    pub fn metrics(&self) -> &ServerMetrics {
        &self.metrics
    }

    /// The runtime behind the server (maintenance passes, dead letters, …).
    pub fn runtime(&self) -> &Runtime {
        self.shared.tasks.runtime()
    }

    /// The durable tools and their runtime: the same piece a custom rmcp
    /// handler uses ([`DurableTasks::wrap`]).
    pub fn durable_tasks(&self) -> &DurableTasks {
        &self.shared.tasks
    }

    /// The tools `tools/list` shows, in registration order.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.listing
    }

    /// An axum router with the MCP endpoint at [`MCP_PATH`], the probes
    /// [`HEALTHZ_PATH`](crate::health::HEALTHZ_PATH) and
    /// [`READYZ_PATH`](crate::health::READYZ_PATH), and
    /// [`METRICS_PATH`](crate::metrics::METRICS_PATH) (unless turned off). Start the runtime
    /// ([`start`](Self::start)) for tasks to run; every router shares it.
    /// Serving the router yourself skips the connection limits and timeouts
    /// that [`serve`](Self::serve) applies (the body limits still hold).
    pub fn router(&self) -> Router {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(self.guard.max_body_bytes)
            .with_cancellation_token(self.stop.child_token());
        if let Some(hosts) = &self.allowed_hosts {
            config = config.with_allowed_hosts(hosts.clone());
        }
        // Enforced even when empty: an empty list refuses every browser origin.
        config = config.with_allowed_origins(self.allowed_origins.clone()).enforce_origin_validation();
        let allowed_hosts = config.allowed_hosts.clone();
        let (mcp, traits) = match &self.handler {
            Some(mount) => mount(&self.shared.tasks, config, MCP_PATH),
            None => {
                let shared = self.shared.clone();
                let traits = HandlerTraits::of(&shared.tasks.wrap(TaskHandler(shared.clone())));
                let service: StreamableHttpService<Durable<TaskHandler>, LocalSessionManager> = StreamableHttpService::new(
                    move || Ok(shared.tasks.wrap(TaskHandler(shared.clone()))),
                    Default::default(),
                    config,
                );
                (Router::new().nest_service(MCP_PATH, SharedService::new(service)), traits)
            }
        };
        let mut guard_config = (*self.guard).clone();
        if self.fast_get {
            let fast = FastGet::new(
                self.shared.tasks.clone(),
                allowed_hosts.clone(),
                traits.clone(),
                self.fast_get_answers.clone(),
            );
            guard_config.fast_get = fast.map(Arc::new);
        }
        if self.fast_create {
            let fast = FastCreate::new(self.shared.tasks.clone(), allowed_hosts, traits, self.fast_create_answers.clone());
            guard_config.fast_create = fast.map(Arc::new);
        }
        let runtime = self.shared.tasks.runtime().clone();
        let mut router = mcp
            .layer(axum::middleware::from_fn_with_state(Arc::new(guard_config), guard))
            // Outside the guard: refused requests are timed too.
            .layer(axum::middleware::from_fn_with_state(self.metrics.clone(), time_requests))
            // Merged after the layers: probes need no token and no Host/Origin check.
            .merge(crate::health::routes(runtime.clone()));
        if self.metrics_endpoint {
            // Likewise: a Prometheus server scrapes by address, without MCP credentials.
            router = router.merge(crate::metrics::routes(self.metrics.clone(), runtime));
        }
        router
    }

    /// This server — the same runtime, tools and counters — with the
    /// `tasks/get` fast path on or off in the routers it builds from now on
    /// (see [`TaskServerBuilder::fast_get`]).
    pub fn with_fast_get(&self, on: bool) -> TaskServer {
        TaskServer { fast_get: on, ..self.clone() }
    }

    /// How many `tasks/get` the fast path has answered, over every router of
    /// this server and its clones.
    pub fn fast_get_answers(&self) -> u64 {
        self.fast_get_answers.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// This server — the same runtime, tools and counters — with the
    /// creation fast path on or off in the routers it builds from now on
    /// (see [`TaskServerBuilder::fast_create`]).
    pub fn with_fast_create(&self, on: bool) -> TaskServer {
        TaskServer { fast_create: on, ..self.clone() }
    }

    /// How many `tools/call` the creation fast path has answered, over every
    /// router of this server and its clones.
    pub fn fast_create_answers(&self) -> u64 {
        self.fast_create_answers.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts the runtime: startup triage, then the executor and the maintenance loops.
    pub async fn start(&self) -> Result<(), ServerError> {
        self.shared.tasks.start().await
    }

    /// Stops taking requests' streams and work; running handlers get the
    /// grace period, then release their leases so a restart resumes them.
    pub async fn shutdown(&self) {
        self.shared.tasks.shutdown(self.shutdown_grace).await;
    }
}
