//! The fast path for `tasks/get`: a poll answered in the front layer, ahead
//! of rmcp, which otherwise builds and spawns a whole stateless service per
//! request and buffers its untagged message enums (most of a poll's cost;
//! see BENCHMARKS.md, "Profiles").
//!
//! Only a request whose every part rmcp would accept as it is takes it: a
//! single JSON-RPC `tasks/get` with MCP 2026-07-28 per-request `_meta`
//! (protocol version, client capabilities declaring the tasks extension,
//! client info, optionally `traceparent`/`tracestate`) and nothing else in
//! its params; headers among those listed in [`ALLOWED_HEADERS`], an allowed
//! `Host`, no `Origin`, an `Accept` of both JSON and SSE without parameters,
//! `MCP-Protocol-Version` equal to the body's, `Mcp-Method: tasks/get` and
//! `Mcp-Name` equal to the `taskId`. Anything else goes to rmcp unchanged.
//!
//! The answer is built by the code rmcp's path runs (that of
//! [`DurableTasks::get_task`]), wrapped in rmcp's own message type and
//! serialized with serde, with the HTTP status rmcp's stateless transport
//! gives each JSON-RPC error code. The differential test
//! (`tests/fast_get_differential.rs`) holds the two paths to the same bytes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use rmcp::ServerHandler;
use rmcp::model::{
    ErrorCode, JsonObject, NumberOrString, ProtocolVersion, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;

use crate::auth::Principal;
use crate::durable::DurableTasks;
use crate::durable_handler::Durable;
use crate::request_trace::meta_request_span;

/// Request headers the fast path knows rmcp ignores or checks as it does.
/// A request with any other header goes to rmcp.
pub const ALLOWED_HEADERS: [&str; 11] = [
    "host",
    "content-type",
    "content-length",
    "accept",
    "accept-encoding",
    "authorization",
    "connection",
    "user-agent",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
];

/// The `_meta` keys the fast path handles as rmcp's path does.
const ALLOWED_META_KEYS: [&str; 5] = [
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    mcp_tasks_runtime::trace_context::TRACEPARENT,
    mcp_tasks_runtime::trace_context::TRACESTATE,
];

/// What the fast path needs of the server behind it (built by
/// [`TaskServer::router`](crate::TaskServer::router)).
#[derive(Clone)]
pub struct FastGet {
    tasks: DurableTasks,
    /// The `Host` values rmcp's transport allows (empty: any).
    allowed_hosts: Vec<String>,
    /// The protocol versions the handler supports.
    supported_versions: Vec<ProtocolVersion>,
    /// Polls answered here, for [`TaskServer::fast_get_answers`](crate::TaskServer::fast_get_answers).
    answered: Arc<AtomicU64>,
}

/// A `tasks/get` body, exactly: anything more fails to parse (and goes to rmcp).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetEnvelope {
    jsonrpc: String,
    id: NumberOrString,
    method: String,
    params: GetParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetParams {
    #[serde(rename = "taskId")]
    task_id: String,
    #[serde(rename = "_meta")]
    meta: JsonObject,
}

impl std::fmt::Debug for FastGet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastGet").field("allowed_hosts", &self.allowed_hosts).finish_non_exhaustive()
    }
}

/// What the fast path must know of the handler rmcp would call (always a
/// [`Durable`], whose `tasks/get` is [`DurableTasks::get_task`]).
pub(crate) struct HandlerTraits {
    /// Whether it advertises the tasks extension (else rmcp answers `-32601`).
    advertises_tasks: bool,
    /// The protocol versions it supports.
    supported_versions: Vec<ProtocolVersion>,
}

impl HandlerTraits {
    /// The traits of `handler`.
    pub(crate) fn of<H: ServerHandler>(handler: &Durable<H>) -> Self {
        HandlerTraits {
            advertises_tasks: handler.get_info().capabilities.supports_tasks(),
            supported_versions: handler.supported_protocol_versions().into_owned(),
        }
    }
}

impl FastGet {
    /// The fast path in front of a handler with `traits`, when it advertises
    /// the tasks extension; `allowed_hosts` as given to rmcp's transport.
    pub(crate) fn new(
        tasks: DurableTasks,
        allowed_hosts: Vec<String>,
        traits: HandlerTraits,
        answered: Arc<AtomicU64>,
    ) -> Option<Self> {
        traits.advertises_tasks.then(|| FastGet {
            tasks,
            allowed_hosts,
            supported_versions: traits.supported_versions,
            answered,
        })
    }

    /// The answer to a `tasks/get` that passed the guard's checks, or `None`
    /// when the request is not one the fast path reproduces exactly.
    pub(crate) async fn answer(&self, parts: &Parts, body: &[u8]) -> Option<Response> {
        if !self.headers_pass(&parts.headers) {
            return None;
        }
        let request: GetEnvelope = serde_json::from_slice(body).ok()?;
        if request.jsonrpc != "2.0" || request.method != "tasks/get" {
            return None;
        }
        if !self.meta_passes(&request.params.meta, &parts.headers) || !name_matches(&parts.headers, &request.params.task_id)
        {
            return None;
        }
        let meta = RequestMetaObject::from(request.params.meta);
        let capabilities = meta.client_capabilities()?;
        if !capabilities.supports_tasks() {
            return None;
        }
        let principal = parts.extensions.get::<Principal>().map(|p| p.0.as_str());
        let span = meta_request_span("tasks/get", &meta);
        let answer = self.tasks.answer_get(request.params.task_id, principal, &capabilities, span).await;
        let (message, status) = match answer {
            Ok(result) => (ServerJsonRpcMessage::response(ServerResult::GetTaskResult(result), request.id), StatusCode::OK),
            Err(error) => {
                let status = error_status(error.code);
                (ServerJsonRpcMessage::error(error, Some(request.id)), status)
            }
        };
        // rmcp answers 500 when its answer does not serialize: let it.
        let body = serde_json::to_vec(&message).ok()?;
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        self.answered.fetch_add(1, Ordering::Relaxed);
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Some(response)
    }

    /// Only known headers, an allowed `Host`, no `Origin`, an `Accept` of
    /// JSON and SSE, one `Mcp-Method: tasks/get`.
    fn headers_pass(&self, headers: &HeaderMap) -> bool {
        if headers.keys().any(|name| !ALLOWED_HEADERS.contains(&name.as_str())) {
            return false;
        }
        let Some(host) = single(headers, header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        if !self.host_allowed(host) || !accepts_json_and_sse(headers) {
            return false;
        }
        single(headers, "mcp-method").is_some_and(|m| m.as_bytes() == b"tasks/get")
    }

    /// The `Host` check of rmcp's transport, for a well-formed `Host`.
    fn host_allowed(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
            return false;
        };
        if self.allowed_hosts.is_empty() {
            return true;
        }
        let name = normalize_host(authority.host());
        self.allowed_hosts.iter().any(|allowed| {
            let allowed = allowed.trim();
            if allowed.is_empty() {
                return false;
            }
            match allowed.parse::<axum::http::uri::Authority>() {
                Ok(a) => normalize_host(a.host()) == name && a.port_u16().is_none_or(|p| authority.port_u16() == Some(p)),
                Err(_) => normalize_host(allowed) == name,
            }
        })
    }

    /// Only known `_meta` keys; a protocol version of 2026-07-28 or later
    /// that the handler supports and `MCP-Protocol-Version` repeats.
    fn meta_passes(&self, meta: &JsonObject, headers: &HeaderMap) -> bool {
        if meta.keys().any(|key| !ALLOWED_META_KEYS.contains(&key.as_str())) {
            return false;
        }
        let Some(version) = meta.get("io.modelcontextprotocol/protocolVersion").and_then(|v| v.as_str()) else {
            return false;
        };
        version >= ProtocolVersion::V_2026_07_28.as_str()
            && self.supported_versions.iter().any(|v| v.as_str() == version)
            && single(headers, "mcp-protocol-version").is_some_and(|h| h.as_bytes() == version.as_bytes())
    }
}

/// The header's value when it occurs exactly once.
fn single(headers: &HeaderMap, name: impl axum::http::header::AsHeaderName) -> Option<&HeaderValue> {
    let mut values = headers.get_all(name).into_iter();
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

/// `Mcp-Name` names the task in plain text (the guard adds it when missing).
fn name_matches(headers: &HeaderMap, task_id: &str) -> bool {
    let plain =
        !task_id.is_empty() && task_id.bytes().all(|b| (0x21..0x7f).contains(&b)) && !task_id.starts_with("=?base64?");
    plain && single(headers, "mcp-name").is_some_and(|h| h.as_bytes() == task_id.as_bytes())
}

/// One `Accept` header listing `application/json` and `text/event-stream`,
/// none of its entries with parameters (whose weights rmcp would read).
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let Some(accept) = single(headers, header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let (mut json, mut sse) = (false, false);
    for entry in accept.split(',') {
        let entry = entry.trim();
        if entry.contains(';') || entry.contains('"') {
            return false;
        }
        json |= entry.eq_ignore_ascii_case("application/json");
        sse |= entry.eq_ignore_ascii_case("text/event-stream");
    }
    json && sse
}

fn normalize_host(host: &str) -> String {
    host.trim_matches('[').trim_matches(']').to_ascii_lowercase()
}

/// The HTTP status rmcp's stateless transport gives a JSON-RPC error of a
/// request whose `_meta` is well formed.
fn error_status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}
