//! `serve`'s observability flags: the log format, the `/metrics` endpoint,
//! the per-principal poll limit and span export, and the logging set-up
//! they choose.

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
    /// Export spans (each task's requests and attempts as one trace) to an
    /// OpenTelemetry collector over OTLP/HTTP: its base URL
    /// (http://HOST:4318; spans go to URL/v1/traces). Off by default.
    #[arg(long, env = "MCP_TASKS_OTLP_ENDPOINT", value_name = "URL", value_parser = super::otlp::parse_endpoint)]
    pub(crate) otlp_endpoint: Option<String>,
}

impl ObservabilityArgs {
    /// Applies the flags to the server being built; `sqlite` or `postgres`,
    /// whichever the store is, reports its group commits at each scrape
    /// (PostgreSQL's: the commits of its creation and update group commits
    /// and the writes they carried).
    pub(crate) fn apply(
        &self,
        builder: TaskServerBuilder,
        sqlite: Option<Arc<mcp_tasks_sqlite::SqliteStore>>,
        postgres: Option<Arc<mcp_tasks_postgres::PostgresStore>>,
    ) -> TaskServerBuilder {
        let mut builder =
            builder.metrics_endpoint(!self.no_metrics).max_polls_per_second(NonZeroU32::new(self.max_polls_per_second));
        if let Some(sqlite) = sqlite {
            builder = builder.metrics_collector(move |metrics| {
                let stats = sqlite.write_stats();
                metrics.group_commits(stats.commits, stats.writes);
            });
        }
        if let Some(postgres) = postgres {
            builder = builder.metrics_collector(move |metrics| {
                let (creations, updates) = (postgres.create_stats(), postgres.apply_stats());
                metrics.group_commits(creations.commits + updates.commits, creations.jobs + updates.jobs);
            });
        }
        builder
    }
}

/// Logs to stderr in `format`; `RUST_LOG` overrides the default: this
/// command's and the server's start-up info and the runtime's (what happened
/// to the work), else warnings, but only errors from rmcp, which logs every
/// error answer (each client mistake, with its request id) as a warning.
///
/// With `otlp` (a traces URL) spans are also exported, through a layer with
/// a filter of its own, so the log filter neither hides spans from it nor
/// shows them in log lines; the returned exporter must be shut down at the
/// end to send the last ones. `instance` names this process in them.
pub(crate) fn init_logging(
    format: LogFormat,
    otlp: Option<&str>,
    instance: &str,
) -> anyhow::Result<Option<super::otlp::OtlpExport>> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{EnvFilter, Layer};
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("warn,rmcp=error,mcp_tasks::cmd::serve=info,mcp_tasks_server::serve=info,mcp_tasks_runtime=info")
    });
    let lines = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let lines = match format {
        LogFormat::Json => lines.json().boxed(),
        LogFormat::Text => lines.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).boxed(),
    };
    let export = otlp.map(|url| super::otlp::OtlpExport::start(url, instance)).transpose()?;
    let spans = export.as_ref().map(|e| e.layer());
    let _ = tracing_subscriber::registry().with(lines.with_filter(filter)).with(spans).try_init();
    Ok(export)
}
