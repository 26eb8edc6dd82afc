//! `GET /metrics`: the server's and its runtime's metrics in Prometheus's
//! text format, and [`ServerMetrics`], the recorder they are kept in.
//!
//! Each [`TaskServer`](crate::TaskServer) has a recorder of its own (two
//! servers in one process never mix their counts); its runtime records into
//! it through [`mcp_tasks_runtime::Metrics`]. The route sits beside the
//! probes, outside the bearer-token guard: a Prometheus server scrapes by
//! address and carries no MCP credentials. Counts and tool names are all it
//! shows; a deployment that must hide them turns the route off
//! ([`TaskServerBuilder::metrics_endpoint`](crate::TaskServerBuilder::metrics_endpoint))
//! or keeps the port private.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mcp_tasks_runtime::{Metrics, Runtime};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::log_limit::RateLimitedWarning;

/// Where the metrics are served.
pub const METRICS_PATH: &str = "/metrics";

/// The server's own metric names (the runtime's are
/// [`mcp_tasks_runtime::metrics::names`]).
pub mod names {
    /// Histogram `{method}`: time from a request's arrival at `/mcp` to its
    /// response, by JSON-RPC method (`other` for a method this server does
    /// not know, `none` for a request refused before its method was read).
    pub const HTTP_REQUEST_SECONDS: &str = "mcp_tasks_http_request_duration_seconds";
    /// Counter: `tasks/get` requests refused for exceeding the per-principal poll rate.
    pub const POLLS_RATE_LIMITED: &str = "mcp_tasks_polls_rate_limited_total";

    /// Every name above.
    pub const ALL: &[&str] = &[HTTP_REQUEST_SECONDS, POLLS_RATE_LIMITED];
}

/// Every metric name a server exports: the runtime's and its own. The
/// shipped dashboard and alert rules may name only these.
pub fn exported_names() -> Vec<&'static str> {
    mcp_tasks_runtime::metrics::names::ALL.iter().chain(names::ALL).copied().collect()
}

/// Latency buckets, seconds: 1 ms to 10 s.
const LATENCY_BUCKETS: [f64; 13] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// Longest a scrape waits for the store's counts; past it the gauges keep
/// their last values (a scrape must answer even when the store does not).
const GAUGE_REFRESH_TIMEOUT: Duration = Duration::from_secs(2);

/// A store that cannot be counted is said so once a minute, not per scrape.
static REFRESH_WARNING: RateLimitedWarning = RateLimitedWarning::new(Duration::from_secs(60));

/// The JSON-RPC methods a request-latency label may name; any other is `other`
/// (a client chooses the method string: labels must stay few).
const KNOWN_METHODS: [&str; 19] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/list",
    "tasks/result",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
];

/// The label of a method outside [`KNOWN_METHODS`], by index.
const OTHER: usize = KNOWN_METHODS.len();
/// The label of a request refused before its method was read, by index.
const NONE: usize = OTHER + 1;

/// Every request-latency label: [`KNOWN_METHODS`], then `other` and `none`.
fn label(index: usize) -> &'static str {
    match index {
        OTHER => "other",
        NONE => "none",
        known => KNOWN_METHODS[known],
    }
}

/// The request-latency histogram of each label, registered on its first
/// request (a series appears once it has a count). Looked up by index, so
/// recording builds no key and hashes nothing.
type LatencyHistograms = Arc<[OnceLock<metrics::Histogram>; NONE + 1]>;

/// Reads a value off the server's store when scraped (say, a store's
/// group-commit totals); registered with
/// [`TaskServerBuilder::metrics_collector`](crate::TaskServerBuilder::metrics_collector).
pub type Collector = Arc<dyn Fn(&Metrics) + Send + Sync>;

/// One server's metrics: its recorder, and what a scrape reads first.
#[derive(Clone)]
pub struct ServerMetrics {
    handle: PrometheusHandle,
    latency: LatencyHistograms,
    metrics: Metrics,
    collectors: Vec<Collector>,
}

impl std::fmt::Debug for ServerMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerMetrics").field("collectors", &self.collectors.len()).finish_non_exhaustive()
    }
}

impl Default for ServerMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerMetrics {
    /// A fresh recorder: every `*_seconds` histogram gets latency buckets
    /// (real Prometheus histograms, so quantiles aggregate across instances).
    pub fn new() -> Self {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), &LATENCY_BUCKETS)
            .expect("the bucket list is not empty")
            .build_recorder();
        let handle = recorder.handle();
        ServerMetrics {
            handle,
            latency: Arc::new(std::array::from_fn(|_| OnceLock::new())),
            metrics: Metrics::to(Arc::new(recorder)),
            collectors: Vec::new(),
        }
    }

    /// The facade the runtime records through (into this recorder).
    pub fn runtime_metrics(&self) -> &Metrics {
        &self.metrics
    }

    pub(crate) fn add_collector(&mut self, collector: Collector) {
        self.collectors.push(collector);
    }

    /// Everything recorded so far, in Prometheus's text format, after
    /// counting the store's gauges and running the collectors.
    pub async fn render(&self, runtime: &Runtime) -> String {
        match tokio::time::timeout(GAUGE_REFRESH_TIMEOUT, runtime.refresh_gauges()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => REFRESH_WARNING.warn(|skipped| {
                tracing::warn!(error = %e, failed_scrapes_since_last_warning = skipped, "metrics: cannot count tasks in the store");
            }),
            Err(_) => REFRESH_WARNING.warn(|skipped| {
                tracing::warn!(failed_scrapes_since_last_warning = skipped, "metrics: counting tasks in the store timed out");
            }),
        }
        for collect in &self.collectors {
            collect(&self.metrics);
        }
        self.handle.run_upkeep();
        self.handle.render()
    }

    fn request(&self, method: Option<&RpcMethod>, took: Duration) {
        let index = method.map_or(NONE, |m| m.0);
        let histogram = self.latency[index].get_or_init(|| {
            let label = label(index);
            let mut registered = None;
            self.metrics.record(|| registered = Some(metrics::histogram!(names::HTTP_REQUEST_SECONDS, "method" => label)));
            registered.unwrap_or_else(metrics::Histogram::noop)
        });
        histogram.record(took.as_secs_f64());
    }

    pub(crate) fn poll_rate_limited(&self) {
        self.metrics.record(|| metrics::counter!(names::POLLS_RATE_LIMITED).increment(1));
    }
}

/// The JSON-RPC method of a request as the guard read it, by its label (a
/// response extension the timing layer reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RpcMethod(usize);

impl RpcMethod {
    /// `tasks/get`.
    pub(crate) const GET: RpcMethod = RpcMethod::known("tasks/get");
    /// `tools/call`.
    pub(crate) const CALL: RpcMethod = RpcMethod::known("tools/call");

    /// The label of `method`: itself when known, else `other`.
    pub(crate) fn of(method: &str) -> Self {
        RpcMethod(KNOWN_METHODS.iter().position(|known| *known == method).unwrap_or(OTHER))
    }

    /// A method of [`KNOWN_METHODS`] (a compile error otherwise).
    const fn known(method: &str) -> Self {
        let mut index = 0;
        while index < KNOWN_METHODS.len() {
            if bytes_equal(KNOWN_METHODS[index].as_bytes(), method.as_bytes()) {
                return RpcMethod(index);
            }
            index += 1;
        }
        panic!("not a known method")
    }
}

const fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Times every request to `/mcp` (outside the guard, so refusals count too).
pub(crate) async fn time_requests(State(metrics): State<ServerMetrics>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let response = next.run(request).await;
    metrics.request(response.extensions().get::<RpcMethod>(), started.elapsed());
    response
}

/// The `/metrics` route over `runtime`.
pub(crate) fn routes(metrics: ServerMetrics, runtime: Runtime) -> Router {
    Router::new().route(METRICS_PATH, get(scrape)).with_state((metrics, runtime))
}

async fn scrape(State((metrics, runtime)): State<(ServerMetrics, Runtime)>) -> Response {
    let body = metrics.render(&runtime).await;
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_outside_the_known_set_share_one_label() {
        assert_eq!(label(RpcMethod::of("tasks/get").0), "tasks/get");
        assert_eq!(RpcMethod::GET, RpcMethod::of("tasks/get"));
        assert_eq!(label(RpcMethod::of("x/attacker-chosen-1").0), "other");
        assert_eq!(label(NONE), "none");
    }

    #[test]
    fn exported_names_are_unique_and_prefixed() {
        let names = exported_names();
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        assert!(names.iter().all(|n| n.starts_with("mcp_tasks_")));
    }
}
