//! `mcp-tasks serve`: the MCP server (Streamable HTTP, protocol 2026-07-28,
//! stateless) on a durable store, until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcp_tasks_core::{Clock, SystemClock};
use mcp_tasks_runtime::{DEFAULT_CONCURRENCY, DEFAULT_QUOTA};
use mcp_tasks_server::tools::ToolSet;
use mcp_tasks_server::{TaskServer, builder::MCP_PATH};
use mcp_tasks_store::{Quota, TaskStore};

use super::config_file::{load_tokens, parse_duration};
use super::listen_addr::parse_listen;
use super::policy_args::PolicyArgs;
use super::request_state_key::load_request_state_key;

/// Flags of `mcp-tasks serve`. Each has an `MCP_TASKS_*` environment
/// equivalent; flags override the `--config` file, which overrides defaults.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    // The help text is an attribute, not a doc comment: rustdoc would read `[::1]` as a link.
    #[arg(long, env = "MCP_TASKS_LISTEN", default_value = "127.0.0.1:8080", value_parser = parse_listen,
          help = "Address to listen on: HOST:PORT (127.0.0.1:8080, localhost:8080, [::1]:8080) or a bare PORT (on 127.0.0.1)")]
    listen: SocketAddr,
    /// The SQLite task database (created on first run).
    #[arg(long, env = "MCP_TASKS_DB", default_value = "./mcp-tasks.db")]
    db: PathBuf,
    /// A PostgreSQL database to keep tasks in instead of --db
    /// (postgres://user@host/db); many instances may share it.
    #[arg(long, env = "MCP_TASKS_DATABASE_URL", value_name = "URL")]
    database_url: Option<String>,
    /// Keep tasks in memory only, instead of --db: nothing survives a stop
    /// (for benchmarks: `mcp-tasks bench --store memory`).
    #[arg(long, conflicts_with = "database_url")]
    in_memory: bool,
    /// Tool sets to serve, comma-separated: demo, conformance, fleet.
    #[arg(long, env = "MCP_TASKS_TOOLS", default_value = "demo", value_delimiter = ',')]
    tools: Vec<ToolSet>,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    clients: super::check::ClientArgs,
    #[command(flatten)]
    observability: super::observability::ObservabilityArgs,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "MCP_TASKS_MAX_BODY_BYTES", default_value_t = mcp_tasks_server::builder::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// A file mapping bearer tokens to principals (TOML `"token" = "principal"`,
    /// or JSON); when given, every request needs a known token.
    #[arg(long, env = "MCP_TASKS_AUTH_TOKENS")]
    auth_tokens: Option<PathBuf>,
    /// Host names accepted in the Host header, comma-separated (default: loopback names).
    #[arg(long, env = "MCP_TASKS_ALLOWED_HOSTS", value_delimiter = ',')]
    allowed_hosts: Vec<String>,
    /// Most tasks one principal may hold, live or retained (0: no limit).
    /// Callers without a bearer token share one principal.
    #[arg(long, env = "MCP_TASKS_MAX_TASKS_PER_PRINCIPAL", value_name = "N",
          default_value_t = DEFAULT_QUOTA.max_tasks.unwrap_or(0))]
    max_tasks_per_principal: u64,
    /// Most bytes of tool arguments one principal may hold (0: no limit).
    #[arg(long, env = "MCP_TASKS_MAX_ARGUMENT_BYTES_PER_PRINCIPAL", value_name = "BYTES",
          default_value_t = DEFAULT_QUOTA.max_argument_bytes.unwrap_or(0))]
    max_argument_bytes_per_principal: u64,
    /// The maintenance leader's term: when the instance running the reaper
    /// and lapsed-lease triage dies or loses the database, another takes
    /// them over within this plus a third of it (PostgreSQL; on SQLite the
    /// one process always leads).
    #[arg(long, env = "MCP_TASKS_LEADER_LEASE", value_parser = parse_duration, default_value = "15s")]
    leader_lease: Duration,
    /// Tasks the executor runs at once (at least 1); a task waiting for
    /// input holds no slot. One claim fills every free slot. The default,
    /// 100, is River's default per queue: slots are async tasks, and short
    /// tasks finish as fast as many of them share each commit; lower it when
    /// each run holds something scarce (a rate-limited API, a connection).
    #[arg(long, env = "MCP_TASKS_CONCURRENCY", value_name = "N", value_parser = parse_concurrency,
          default_value_t = DEFAULT_CONCURRENCY)]
    concurrency: usize,
    /// How long running tasks get to finish at shutdown before they are
    /// released for the next start to resume.
    #[arg(long, env = "MCP_TASKS_SHUTDOWN_GRACE", value_parser = parse_duration, default_value = "10s")]
    shutdown_grace: Duration,
    // The help text is an attribute, not a doc comment: rustdoc would read `[:port]` as a link.
    #[arg(
        long,
        env = "MCP_TASKS_ALLOWED_ORIGINS",
        value_delimiter = ',',
        help = "Browser origins accepted in the Origin header, comma-separated, as \
                  scheme://host[:port] (port * = any); others get 403 (default: loopback origins)"
    )]
    allowed_origins: Vec<String>,
    /// Time a connection gets to send a complete request head (from accept,
    /// or from the first byte of a later request).
    #[arg(long, env = "MCP_TASKS_HEADER_TIMEOUT", value_parser = parse_duration, default_value = "10s")]
    header_timeout: Duration,
    /// Time a request gets to send its whole body (else 408 and the connection closes).
    #[arg(long, env = "MCP_TASKS_BODY_TIMEOUT", value_parser = parse_duration, default_value = "30s")]
    body_timeout: Duration,
    /// Time an idle keep-alive connection (or one whose client stopped
    /// reading a response) stays open.
    #[arg(long, env = "MCP_TASKS_IDLE_TIMEOUT", value_parser = parse_duration, default_value = "60s")]
    idle_timeout: Duration,
    /// Connections served at once; beyond it new ones wait in the listen backlog.
    #[arg(long, env = "MCP_TASKS_MAX_CONNECTIONS", default_value_t = mcp_tasks_server::limits::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Request-body bytes held at once; a large body beyond it gets 503 and
    /// Retry-After (bodies up to 64 KiB are not counted).
    #[arg(long, env = "MCP_TASKS_MAX_BODY_BYTES_IN_FLIGHT",
          default_value_t = mcp_tasks_server::limits::DEFAULT_MAX_BODY_BYTES_IN_FLIGHT)]
    max_body_bytes_in_flight: usize,
    /// A file holding the key (at least 32 bytes) that seals the
    /// requestState of multi-round-trip answers; every instance of a fleet
    /// needs the same one. Default: a random key per process.
    #[arg(long, env = "MCP_TASKS_REQUEST_STATE_KEY_FILE", value_name = "FILE")]
    request_state_key_file: Option<PathBuf>,
}

/// Runs `mcp-tasks serve`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Names this process in exported spans (OpenTelemetry's service.instance.id).
    let instance = uuid::Uuid::new_v4().to_string();
    let spans = super::observability::init_logging(
        args.observability.log_format,
        args.observability.otlp_endpoint.as_deref(),
        &instance,
    )?;
    // The same check as `mcp-tasks check`: an error refuses to start, before anything is bound or opened.
    let policy = super::check::checked_policy(&args.policy, &args.clients)?;
    // Read before the database is opened: a bad tokens file leaves no new file behind.
    let tokens = args.auth_tokens.as_deref().map(load_tokens).transpose()?;
    let request_state_key = args.request_state_key_file.as_deref().map(load_request_state_key).transpose()?;
    // Bound before the database is opened: a port in use leaves no new file behind.
    let listener =
        tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("cannot listen on {}", args.listen))?;
    // On SQLite this process is the only one: at start every lease is a
    // dead process's (single-node triage), which the serving lock makes true
    // (a second server on this file is refused; `tasks`/`dlq` open without
    // it). On PostgreSQL other instances may hold live leases: only lapsed
    // ones are triaged.
    // On PostgreSQL every instant comes from the database server's clock
    // (sampled, offset kept), so instances with skewed clocks agree on
    // when a lease or a leader's term lapses.
    let mut clock: Option<Arc<dyn Clock>> = None;
    let mut postgres = None;
    let (store, sqlite, single_node, location): (
        Arc<dyn TaskStore>,
        Option<Arc<mcp_tasks_sqlite::SqliteStore>>,
        bool,
        String,
    ) = match &args.database_url {
        Some(url) => {
            let store = mcp_tasks_postgres::PostgresStore::open(url).await?;
            let location = format!("PostgreSQL {}", store.url());
            let database_clock = store.database_clock(Arc::new(SystemClock)).await?;
            database_clock.spawn_refresher(mcp_tasks_postgres::DEFAULT_CLOCK_REFRESH);
            tracing::info!(
                "using the database's clock: it is {:?} {} this machine's",
                database_clock.offset(),
                if database_clock.database_is_ahead() { "ahead of" } else { "behind" }
            );
            clock = Some(database_clock);
            let store = Arc::new(store);
            postgres = Some(store.clone());
            (store, None, false, location)
        }
        None if args.in_memory => {
            (Arc::new(mcp_tasks_store::MemoryStore::new()), None, true, "memory (nothing durable)".to_owned())
        }
        None => {
            let store = mcp_tasks_sqlite::SqliteStore::open_with(&args.db, mcp_tasks_sqlite::SqliteOptions::serving())
                .with_context(|| format!("cannot open the task database {}", args.db.display()))?;
            let sqlite = Arc::new(store);
            (sqlite.clone(), Some(sqlite), true, format!("SQLite {}", args.db.display()))
        }
    };
    let mut builder = TaskServer::builder(store);
    if let Some(clock) = clock {
        builder = builder.clock(clock);
    }
    builder = builder
        .policy(policy)
        .single_node(single_node)
        .max_body_bytes(args.max_body_bytes)
        .shutdown_grace(args.shutdown_grace)
        .connection_limits(mcp_tasks_server::ConnectionLimits {
            header_timeout: args.header_timeout,
            body_timeout: args.body_timeout,
            idle_timeout: args.idle_timeout,
            max_connections: args.max_connections,
            max_body_bytes_in_flight: args.max_body_bytes_in_flight,
        });
    let limit = |n: u64| (n > 0).then_some(n);
    let quota = Quota {
        max_tasks: limit(args.max_tasks_per_principal),
        max_argument_bytes: limit(args.max_argument_bytes_per_principal),
    };
    let (leader_lease, concurrency) = (args.leader_lease, args.concurrency);
    builder = builder.runtime(|r| r.quota(quota).leader_lease(leader_lease).concurrency(concurrency));
    let mut sets: Vec<ToolSet> = Vec::new();
    for set in &args.tools {
        if !sets.contains(set) {
            sets.push(*set);
            builder = set.register(builder);
        }
    }
    if let Some(tokens) = tokens {
        builder = builder.auth(tokens);
    }
    if let Some(key) = request_state_key {
        builder = builder.request_state_key(key);
    }
    if !args.allowed_hosts.is_empty() {
        builder = builder.allowed_hosts(args.allowed_hosts.clone());
    }
    if !args.allowed_origins.is_empty() {
        builder = builder.allowed_origins(args.allowed_origins.clone());
    }
    builder = args.observability.apply(builder, sqlite.clone(), postgres);
    let server = builder.build()?;
    let sets: Vec<String> = sets.iter().map(ToString::to_string).collect();
    tracing::info!(
        "listening on http://{}{MCP_PATH} (store: {location}, tools: {})",
        listener.local_addr()?,
        sets.join(",")
    );
    if let Some(url) = &args.observability.otlp_endpoint {
        tracing::info!("exporting spans to {url} (service.instance.id {instance})");
    }
    server.serve(listener, shutdown_signal()).await?;
    // The runtime has stopped: fold the WAL into the .db file, so a copy of
    // that file alone (a backup by stopping and copying) holds every task.
    if let Some(sqlite) = sqlite {
        match sqlite.checkpoint().await {
            Ok(()) => tracing::info!("checkpointed {}", args.db.display()),
            Err(e) => tracing::error!(
                "{e}; the newest tasks are only in {}-wal: keep it with the database file",
                args.db.display()
            ),
        }
    }
    if let Some(spans) = spans {
        // Blocks until the last batch is sent (or the timeout): off the async workers.
        let _ = tokio::task::spawn_blocking(move || spans.shutdown()).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--concurrency`: a whole number of executor slots, at least one.
fn parse_concurrency(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1 (0 slots would never run a task)".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{text:?} is not a whole number of tasks: {e}")),
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; only SIGINT stops the server");
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    tracing::info!("shutting down");
}
