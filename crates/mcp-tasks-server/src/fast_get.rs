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

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use mcp_tasks_runtime::trace_context;
use rmcp::ServerHandler;
use rmcp::model::{ClientCapabilities, ErrorCode, NumberOrString, ProtocolVersion, ServerJsonRpcMessage, ServerResult};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::auth::Principal;
use crate::durable::DurableTasks;
use crate::durable_handler::Durable;
use crate::envelope;

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

/// Bytes reserved for an answer's body: most fit.
const ANSWER_CAPACITY: usize = 512;

/// What the fast path needs of the server behind it (built by
/// [`TaskServer::router`](crate::TaskServer::router)).
#[derive(Clone)]
pub struct FastGet {
    tasks: DurableTasks,
    /// The `Host` values rmcp's transport allows, as given (empty: any).
    allowed_hosts: Vec<String>,
    /// The same, normalized once: each host name and the port it requires.
    allowed: Vec<(String, Option<u16>)>,
    /// The protocol versions the handler supports.
    supported_versions: Vec<ProtocolVersion>,
    /// Polls answered here, for [`TaskServer::fast_get_answers`](crate::TaskServer::fast_get_answers).
    answered: Arc<AtomicU64>,
}

/// A `tasks/get` body of exactly the shape the fast path serves, read in
/// one pass without copying what it can borrow: anything more, or repeated
/// members, fails to parse (and the body goes the general way).
///
/// Its parse implies the guard's envelope check (`envelope::check`) accepts
/// the body as a `tasks/get` with this id and `taskId`: every value is read
/// as rmcp reads it (strings decoded; the parts only skipped, checked
/// [`readable`](envelope::readable); `jsonrpc` and `id` held to what the
/// check allows), the members are unique, and the params are ones rmcp's
/// `GetTaskParams` takes. So the guard checks such a body once, here. The
/// client capabilities are decoded from their text by the derive rmcp
/// decodes them from a JSON value with (a repeated member, which the text
/// refuses and a value would not, sends the body the general way).
pub(crate) struct GetRequest<'a> {
    id: NumberOrString,
    task_id: Cow<'a, str>,
    meta: GetMeta<'a>,
    capabilities: ClientCapabilities,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: &'a RawValue,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: Object<GetParams<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetParams<'a> {
    #[serde(rename = "taskId", borrow)]
    task_id: Cow<'a, str>,
    #[serde(rename = "_meta", borrow)]
    meta: Object<GetMeta<'a>>,
}

/// `T` read only from a JSON object: serde's derive also reads a struct
/// from an array of its fields, which is not the shape the fast path serves
/// (and at the top level, one the envelope check refuses).
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Members<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(Members(std::marker::PhantomData)).map(Object)
    }
}

/// The `_meta` keys the fast path handles as rmcp's path does, and only them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    protocol_version: Cow<'a, str>,
    /// Skipped by the parse, then checked readable and decoded (see [`GetRequest::parse`]).
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow)]
    client_capabilities: &'a RawValue,
    /// Not used; skipped by the parse, then checked readable.
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, borrow)]
    client_info: Option<&'a RawValue>,
    #[serde(rename = "traceparent", default)]
    traceparent: Option<Value>,
    #[serde(rename = "tracestate", default)]
    tracestate: Option<Value>,
}

impl<'a> GetRequest<'a> {
    /// `body` as a plain `tasks/get`, or `None` when it is anything else.
    pub(crate) fn parse(body: &'a [u8]) -> Option<Self> {
        let Object(envelope): Object<GetEnvelope<'a>> = serde_json::from_slice(body).ok()?;
        if envelope.jsonrpc.get() != "\"2.0\"" || envelope.method != "tasks/get" {
            return None;
        }
        // The ids the envelope check accepts: a string, or an integer of 64 bits written as one.
        let raw = envelope.id.get();
        let id = if raw.starts_with('"') {
            NumberOrString::String(serde_json::from_str::<Cow<'_, str>>(raw).ok()?.into())
        } else {
            NumberOrString::Number(serde_json::from_str::<i64>(raw).ok()?)
        };
        let Object(params) = envelope.params;
        let Object(meta) = params.meta;
        // What the parse only skipped must read as rmcp reads it (the envelope
        // check's first pass), and the capabilities decode.
        let capabilities = meta.client_capabilities.get();
        if !envelope::readable(capabilities) || !meta.client_info.is_none_or(|info| envelope::readable(info.get())) {
            return None;
        }
        let capabilities = serde_json::from_str(capabilities).ok()?;
        Some(GetRequest { id, task_id: params.task_id, meta, capabilities })
    }

    /// The task polled.
    pub(crate) fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The request's id as JSON (for an answer the guard gives itself).
    pub(crate) fn id_value(&self) -> Value {
        self.id.clone().into_json_value()
    }
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
        let allowed = allowed_hosts.iter().filter_map(|allowed| allowed_host(allowed)).collect();
        traits.advertises_tasks.then(|| FastGet {
            tasks,
            allowed_hosts,
            allowed,
            supported_versions: traits.supported_versions,
            answered,
        })
    }

    /// The answer to a `tasks/get` that passed the guard's checks, or `None`
    /// when the request is not one the fast path reproduces exactly.
    pub(crate) async fn answer(&self, parts: &Parts, request: GetRequest<'_>) -> Option<Response> {
        if !self.headers_pass(&parts.headers) {
            return None;
        }
        let meta = &request.meta;
        if !self.version_passes(&meta.protocol_version, &parts.headers) || !name_matches(&parts.headers, &request.task_id) {
            return None;
        }
        let capabilities = &request.capabilities;
        if !capabilities.supports_tasks() {
            return None;
        }
        let principal = parts.extensions.get::<Principal>().map(|p| p.0.as_str());
        let traceparent = meta.traceparent.as_ref().and_then(Value::as_str);
        let tracestate = meta.tracestate.as_ref().and_then(Value::as_str);
        let span = trace_context::request_span("tasks/get", traceparent, tracestate);
        let task_id = request.task_id.into_owned();
        let answer = self.tasks.answer_get(task_id, principal, capabilities, span).await;
        let (message, status) = match answer {
            Ok(result) => (ServerJsonRpcMessage::response(ServerResult::GetTaskResult(result), request.id), StatusCode::OK),
            Err(error) => {
                let status = error_status(error.code);
                (ServerJsonRpcMessage::error(error, Some(request.id)), status)
            }
        };
        // Sized for a typical answer, so serializing seldom grows it.
        let mut body = Vec::with_capacity(ANSWER_CAPACITY);
        // rmcp answers 500 when its answer does not serialize: let it.
        serde_json::to_writer(&mut body, &message).ok()?;
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
        let name = authority.host().trim_matches('[').trim_matches(']');
        self.allowed.iter().any(|(allowed, port)| {
            // `allowed` is lowercase already.
            name.eq_ignore_ascii_case(allowed) && port.is_none_or(|p| authority.port_u16() == Some(p))
        })
    }

    /// A protocol version of 2026-07-28 or later that the handler supports
    /// and `MCP-Protocol-Version` repeats.
    fn version_passes(&self, version: &str, headers: &HeaderMap) -> bool {
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

/// An allowed `Host` entry as rmcp's check reads it: the normalized host
/// name and the port it requires, if any (`None` for a blank entry).
fn allowed_host(allowed: &str) -> Option<(String, Option<u16>)> {
    let allowed = allowed.trim();
    if allowed.is_empty() {
        return None;
    }
    Some(match allowed.parse::<axum::http::uri::Authority>() {
        Ok(a) => (normalize_host(a.host()), a.port_u16()),
        Err(_) => (normalize_host(allowed), None),
    })
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
