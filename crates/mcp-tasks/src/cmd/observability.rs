//! `serve`'s observability flags: the log format, the `/metrics` endpoint
//! and the per-principal poll limit, and the logging set-up they choose.

use std::num::NonZeroU32;
use std::sync::Arc;

use mcp_tasks_server::TaskServerBuilder;

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields.message`, the
    /// event's fields such as `task` and `tool`, `target`), for log pipelines.
    Json,
}

/// The observability flags of `serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ObservabilityArgs {
    /// Log line format on stderr: text or json.
    #[arg(long, env = "MCP_TASKS_LOG_FORMAT", value_enum, default_value = "text")]
    pub(crate) log_format: LogFormat,
    /// Do not serve GET /metrics (Prometheus text format; served by default,
    /// without a bearer token, like /healthz and /readyz).
    #[arg(long, env = "MCP_TASKS_NO_METRICS")]
    no_metrics: bool,
    /// Most tasks/get per second per principal; beyond it a poll gets HTTP
    /// 429 with Retry-After and JSON-RPC error -32051 (0: no limit).
    #[arg(long, env = "MCP_TASKS_MAX_POLLS_PER_SECOND", value_name = "N", default_value_t = 0)]
    max_polls_per_second: u32,
}

impl ObservabilityArgs {
    /// Applies the flags to the server being built; `sqlite`, when the store
    /// is SQLite, reports its group commits at each scrape.
    pub(crate) fn apply(
        &self,
        builder: TaskServerBuilder,
        sqlite: Option<Arc<mcp_tasks_sqlite::SqliteStore>>,
    ) -> TaskServerBuilder {
        let mut builder =
            builder.metrics_endpoint(!self.no_metrics).max_polls_per_second(NonZeroU32::new(self.max_polls_per_second));
        if let Some(sqlite) = sqlite {
            builder = builder.metrics_collector(move |metrics| {
                let stats = sqlite.write_stats();
                metrics.group_commits(stats.commits, stats.writes);
            });
        }
        builder
    }
}

/// Logs to stderr in `format`; `RUST_LOG` overrides the default: this
/// command's and the server's start-up info and the runtime's (what happened
/// to the work), else warnings, but only errors from rmcp, which logs every
/// error answer (each client mistake, with its request id) as a warning.
pub(crate) fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("warn,rmcp=error,mcp_tasks::cmd::serve=info,mcp_tasks_server::serve=info,mcp_tasks_runtime=info")
    });
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).try_init(),
    };
}
