//! The front layer in front of rmcp's Streamable HTTP service. It answers,
//! with the specification's errors, what rmcp alone would answer wrongly or
//! not at all, and lets everything else through untouched:
//!
//! - a missing or unknown bearer token (when tokens are configured): HTTP 401;
//! - a body over the configured limit: HTTP 413 with a JSON-RPC error;
//! - a body that would overrun the bytes allowed in flight: HTTP 503 with
//!   `Retry-After` ([`BodyBudget`]);
//! - a body that does not arrive within the body timeout: HTTP 408, and the
//!   connection is closed;
//! - malformed JSON: HTTP 400, `-32700` (rmcp answers 415 in plain text);
//! - JSON that is not a JSON-RPC request (an `id` that is null, a boolean,
//!   an object, a fraction or beyond 64 bits; a missing or non-string
//!   `method`): HTTP 400, `-32600` naming the member (rmcp answers 415);
//! - wrong-typed params of the methods this server implements, such as a
//!   numeric `taskId`: HTTP 400, `-32602` naming the field (rmcp answers
//!   `-32601`, since the typed request does not parse);
//! - a `tasks/get` beyond its principal's poll rate, when one is set
//!   ([`PollLimiter`]): HTTP 429 with `Retry-After`, `-32051`.
//!
//! A plain `tasks/get` is answered here, ahead of rmcp, when the server
//! turns the fast path on ([`fast_get`](crate::fast_get)): by the same
//! code, with the same bytes; so is a plain `tools/call` creating a durable
//! task ([`fast_create`](crate::fast_create)).
//!
//! The body is parsed once, without copying its contents: by [`envelope`],
//! or, for a plain `tasks/get` when the fast path is on, by the fast path's
//! own borrowed parse, whose success implies the envelope check's verdict.
//! A `tasks/*` request without an `Mcp-Name` header gets one derived from
//! its `taskId` before rmcp sees it (see [`tolerate_missing_task_name`]);
//! a present header that disagrees with the body is still `-32020`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

use crate::auth::{Principal, TokenMap};
use crate::body_budget::BodyBudget;
use crate::envelope;
pub use crate::envelope::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};
use crate::fast_create::FastCreate;
use crate::fast_get::{FastGet, GetRequest};
use crate::log_limit::{RateLimitedWarning, truncated};
use crate::metrics::{RpcMethod, ServerMetrics};
use crate::rate_limit::{POLL_RATE_LIMITED, PollLimiter, RetryAfter};

/// JSON-RPC implementation-defined server error, used for "busy, retry".
pub const SERVER_BUSY: i64 = -32000;

/// The header that names a request's target (SEP-2243): the tool, or the task.
const MCP_NAME: &str = "mcp-name";

/// The budget refusals are warned about at most this often.
static BUDGET_WARNING: RateLimitedWarning = RateLimitedWarning::new(Duration::from_secs(60));

/// What the front layer enforces.
#[derive(Debug, Clone)]
pub struct GuardConfig {
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Bearer tokens, when the server requires authentication.
    pub tokens: Option<Arc<TokenMap>>,
    /// Time a request body gets to arrive in full.
    pub body_timeout: Duration,
    /// Bytes of request bodies that may be in flight at once.
    pub budget: BodyBudget,
    /// The per-principal limit on `tasks/get`, if any.
    pub poll_limit: Option<PollLimiter>,
    /// Where refused polls are counted.
    pub metrics: Option<ServerMetrics>,
    /// Answers a plain `tasks/get` ahead of rmcp, when on.
    pub fast_get: Option<Arc<FastGet>>,
    /// Answers a plain `tools/call` of a durable tool ahead of rmcp, when on.
    pub fast_create: Option<Arc<FastCreate>>,
}

/// The middleware (use with `axum::middleware::from_fn_with_state`).
pub async fn guard(State(config): State<Arc<GuardConfig>>, mut request: Request, next: Next) -> Response {
    if let Some(tokens) = &config.tokens {
        let authorization = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        match tokens.authenticate(authorization) {
            Ok(principal) => {
                request.extensions_mut().insert(principal);
            }
            Err(e) => {
                let mut response = rpc_error(StatusCode::UNAUTHORIZED, Value::Null, INVALID_REQUEST, e.to_string(), None);
                response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return response;
            }
        }
    }
    if request.method() != Method::POST || !is_json(&request) {
        // rmcp answers other methods (405) and content types (415) correctly.
        return next.run(request).await;
    }
    let declared =
        request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|bytes| bytes > config.max_body_bytes) {
        let mut response = too_large(config.max_body_bytes);
        // The body was not read: the connection cannot carry another request.
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    let _admission = match config.budget.admit(declared, config.max_body_bytes) {
        Ok(admission) => admission,
        Err(exhausted) => {
            BUDGET_WARNING.warn(|skipped| {
                tracing::warn!(
                    budget_bytes = exhausted.budget_bytes,
                    refused_since_last_warning = skipped,
                    "request bodies in flight reached their budget; refusing large bodies with 503"
                );
            });
            let mut response = rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                SERVER_BUSY,
                format!(
                    "server busy: request bodies in flight would exceed this server's budget of {} bytes; retry shortly",
                    exhausted.budget_bytes
                ),
                Some(json!({"maxBodyBytesInFlight": exhausted.budget_bytes})),
            );
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            // The body was not read: the connection cannot carry another request.
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    let (mut parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(config.body_timeout, axum::body::to_bytes(body, config.max_body_bytes)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) if is_length_limit(&e) => return too_large(config.max_body_bytes),
        Ok(Err(e)) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                INVALID_REQUEST,
                format!("cannot read request body: {e}"),
                None,
            );
        }
        Err(_) => {
            let mut response = rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                Value::Null,
                INVALID_REQUEST,
                format!("the request body did not arrive within {}", humantime::format_duration(config.body_timeout)),
                None,
            );
            // The rest of the body may still come: this connection cannot carry another request.
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    let large = bytes.len() > crate::body_budget::SMALL_BODY_BYTES;
    // A plain creation is parsed once, by the fast path, which takes only
    // bodies the envelope check below accepts (see `FastCreate::answer`).
    if !large
        && let Some(fast) = &config.fast_create
        && let Some(response) = fast.answer(&parts, &bytes).await
    {
        return finisher(&config, Some(RpcMethod::CALL))(response);
    }
    // A plain `tasks/get` is read once, borrowed, by the fast path's parse,
    // whose success implies the envelope check's verdict (see `GetRequest`).
    if !large
        && let Some(fast) = &config.fast_get
        && let Some(get) = GetRequest::parse(&bytes)
    {
        tolerate_missing_task_name(&mut parts.headers, get.task_id());
        if let Some(refused) = limit_poll(&config, &parts, || get.id_value()) {
            return refused;
        }
        let finish = finisher(&config, Some(RpcMethod::GET));
        if let Some(response) = fast.answer(&parts, get).await {
            return finish(response);
        }
        return finish(next.run(Request::from_parts(parts, Body::from(bytes))).await);
    }
    // Parsing a large body is CPU work: keep it off the async workers, where
    // it would delay every other request's I/O.
    let checked = if large {
        let shared = bytes.clone();
        match tokio::task::spawn_blocking(move || envelope::check(&shared)).await {
            Ok(checked) => checked,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // The runtime is shutting down.
            Err(_) => return shutting_down(),
        }
    } else {
        envelope::check(&bytes)
    };
    let method = match checked {
        Ok(checked) => {
            if let Some(task_id) = &checked.task_id {
                tolerate_missing_task_name(&mut parts.headers, task_id);
            }
            let method = checked.method.as_deref().map(RpcMethod::of);
            if method == Some(RpcMethod::GET)
                && let Some(refused) = limit_poll(&config, &parts, || checked.id)
            {
                return refused;
            }
            method
        }
        Err(refusal) => {
            let data = refusal.method.map(|method| json!({"method": method}));
            return rpc_error(StatusCode::BAD_REQUEST, refusal.id, refusal.code, refusal.message, data);
        }
    };
    let with_method = finisher(&config, method);
    let request = Request::from_parts(parts, Body::from(bytes));
    if !large {
        return with_method(next.run(request).await);
    }
    // rmcp parses the body again (twice over, in effect) inside this call,
    // tens of milliseconds of CPU for a large one that would stall one of the
    // few async workers and every small request queued behind it. Drive it
    // from a blocking thread instead; its spawned work still runs on the workers.
    let runtime = tokio::runtime::Handle::current();
    match tokio::task::spawn_blocking(move || runtime.block_on(next.run(request))).await {
        Ok(response) => with_method(response),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => shutting_down(),
    }
}

/// The answer to a poll beyond its principal's rate, when a limit is set
/// and this one is; `id` gives the request's id.
fn limit_poll(config: &GuardConfig, parts: &Parts, id: impl FnOnce() -> Value) -> Option<Response> {
    let limiter = config.poll_limit.as_ref()?;
    let principal = parts.extensions.get::<Principal>().map_or("", |p| p.0.as_str());
    let wait = limiter.check(principal).err()?;
    if let Some(metrics) = &config.metrics {
        metrics.poll_rate_limited();
    }
    let mut response = poll_rate_limited(id(), limiter.per_second(), wait);
    response.headers_mut().insert(RATE_LIMIT_POLICY, rate_limit_policy(limiter.per_second()));
    response.extensions_mut().insert(RpcMethod::GET);
    Some(response)
}

/// What every answer to a request of `method` carries: the method (for the
/// timing layer) and, on a poll, the limit it is counted against.
fn finisher(config: &GuardConfig, method: Option<RpcMethod>) -> impl FnOnce(Response) -> Response + use<> {
    let is_get = method == Some(RpcMethod::GET);
    let policy = config.poll_limit.as_ref().filter(|_| is_get).map(|limiter| rate_limit_policy(limiter.per_second()));
    move |mut response: Response| {
        if let Some(policy) = policy {
            response.headers_mut().insert(RATE_LIMIT_POLICY, policy);
        }
        if let Some(method) = method {
            response.extensions_mut().insert(method);
        }
        response
    }
}

fn shutting_down() -> Response {
    rpc_error(StatusCode::SERVICE_UNAVAILABLE, Value::Null, SERVER_BUSY, "the server is shutting down".to_owned(), None)
}

/// The header that advertises the poll limit on every `tasks/get` answer
/// (the IETF `RateLimit-Policy` field: `q` polls per `w` seconds).
pub const RATE_LIMIT_POLICY: &str = "ratelimit-policy";

/// `"tasks-get";q=N;w=1`.
fn rate_limit_policy(per_second: u32) -> HeaderValue {
    HeaderValue::from_str(&format!("\"tasks-get\";q={per_second};w=1")).expect("ASCII")
}

/// HTTP 429 with `Retry-After` and [`POLL_RATE_LIMITED`], naming the limit and the wait.
fn poll_rate_limited(id: Value, per_second: u32, wait: RetryAfter) -> Response {
    let mut response = rpc_error(
        StatusCode::TOO_MANY_REQUESTS,
        id,
        POLL_RATE_LIMITED,
        format!(
            "too many polls: this server allows {per_second} tasks/get per second per principal; retry in {} ms",
            wait.millis()
        ),
        Some(json!({"maxPollsPerSecond": per_second, "retryAfterMs": wait.millis()})),
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(wait.header_seconds()));
    response
}

fn too_large(max_body_bytes: usize) -> Response {
    rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        Value::Null,
        INVALID_REQUEST,
        format!("request body exceeds this server's limit of {max_body_bytes} bytes"),
        Some(json!({"maxBodyBytes": max_body_bytes})),
    )
}

/// A `tasks/get`, `tasks/update` or `tasks/cancel` without an `Mcp-Name`
/// header is served as if the header named its `taskId`.
///
/// The tasks extension says clients MUST send `Mcp-Name: <taskId>` so that
/// intermediaries can route polls without reading the body, and servers MUST
/// reject a header that disagrees with the body (rmcp does, with `-32020`).
/// A missing header misleads nobody: the body is authoritative, there is
/// nothing to disagree with, and the pinned conformance suite checks only the
/// mismatch on `tasks/*` (a missing `Mcp-Name` on `tools/call` is still
/// refused, as SEP-2243's own checks require). Refusing it would lock out
/// clients that omit it (FastMCP's tasks client does) for no safety gain;
/// the official Python SDK's server accepts it too.
pub fn tolerate_missing_task_name(headers: &mut axum::http::HeaderMap, task_id: &str) {
    if headers.contains_key(MCP_NAME) {
        return;
    }
    // Header values carry visible ASCII; anything else travels Base64-wrapped (SEP-2243).
    let plain =
        task_id.bytes().all(|b| (0x20..0x7f).contains(&b)) && task_id.trim() == task_id && !task_id.starts_with("=?base64?");
    let value = HeaderValue::from_str(task_id).ok().filter(|_| plain).or_else(|| {
        let encoded = base64::engine::general_purpose::STANDARD.encode(task_id);
        HeaderValue::from_str(&format!("=?base64?{encoded}?=")).ok()
    });
    if let Some(value) = value {
        headers.insert(MCP_NAME, value);
    }
}

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json"))
}

fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = err.source();
    }
    false
}

/// A JSON-RPC error response with an HTTP status.
/// Client mistakes are logged at debug level only, with the message cut short.
pub fn rpc_error(status: StatusCode, id: Value, code: i64, message: String, data: Option<Value>) -> Response {
    tracing::debug!(status = status.as_u16(), code, message = %truncated(&message), "refused a request");
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}
