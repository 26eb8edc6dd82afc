//! Probes for orchestrators: `GET /healthz` (the process answers) and
//! `GET /readyz` (the store can serve). Neither needs a bearer token nor
//! passes the Host/Origin checks of `/mcp`: a load balancer or kubelet
//! probes by IP and carries no credentials.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mcp_tasks_runtime::Runtime;
use serde_json::json;

use crate::log_limit::RateLimitedWarning;

/// Probes come every few seconds: say the store is down once a minute, not each time.
static NOT_READY_WARNING: RateLimitedWarning = RateLimitedWarning::new(std::time::Duration::from_secs(60));

/// Liveness: 200 while the process answers HTTP.
pub const HEALTHZ_PATH: &str = "/healthz";
/// Readiness: 200 when the store reports healthy, else 503 with the cause.
pub const READYZ_PATH: &str = "/readyz";

/// The two probe routes over `runtime`.
pub(crate) fn routes(runtime: Runtime) -> Router {
    Router::new().route(HEALTHZ_PATH, get(healthz)).route(READYZ_PATH, get(readyz)).with_state(runtime)
}

async fn healthz() -> Response {
    axum::Json(json!({"status": "ok"})).into_response()
}

async fn readyz(State(runtime): State<Runtime>) -> Response {
    match runtime.store().health().await {
        Ok(()) => axum::Json(json!({"status": "ready"})).into_response(),
        Err(e) => {
            NOT_READY_WARNING.warn(|skipped| {
                tracing::warn!(error = %e, failed_probes_since_last_warning = skipped, "not ready: the task store cannot serve");
            });
            (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({"status": "unavailable", "cause": e.to_string()})))
                .into_response()
        }
    }
}
