//! What the fast paths ([`fast_get`](crate::fast_get),
//! [`fast_create`](crate::fast_create)) share: the checks that a request is
//! one rmcp's stateless transport would take as it is (headers, `Host`,
//! per-request `_meta`), and the framing of the answer as rmcp frames it
//! (its message type, serialized with serde, the HTTP status it gives a
//! JSON-RPC error).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use rmcp::ServerHandler;
use rmcp::model::{ErrorCode, JsonObject, NumberOrString, ProtocolVersion};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::durable_handler::Durable;

/// Request headers the fast paths know rmcp ignores or checks as they do.
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

/// The `_meta` keys every fast path handles as rmcp's path does.
const ALLOWED_META_KEYS: [&str; 5] = [
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    mcp_tasks_runtime::trace_context::TRACEPARENT,
    mcp_tasks_runtime::trace_context::TRACESTATE,
];

/// What a fast path must know of the handler rmcp would call (always a
/// [`Durable`]).
#[derive(Clone)]
pub(crate) struct HandlerTraits {
    /// Whether it advertises the tasks extension (else rmcp answers `-32601`).
    pub(crate) advertises_tasks: bool,
    /// The protocol versions it supports.
    pub(crate) supported_versions: Vec<ProtocolVersion>,
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

/// Bytes reserved for an answer's body: most fit.
const ANSWER_CAPACITY: usize = 512;

/// The transport's and the handler's checks a fast path repeats.
#[derive(Clone, Debug)]
pub(crate) struct RequestChecks {
    /// The `Host` values rmcp's transport allows, as given (empty: any).
    allowed_hosts: Vec<String>,
    /// The same, normalized once: each host name and the port it requires.
    allowed: Vec<(String, Option<u16>)>,
    /// The protocol versions the handler supports.
    supported_versions: Vec<ProtocolVersion>,
}

impl RequestChecks {
    /// The checks of a transport allowing `allowed_hosts` in front of a
    /// handler supporting `supported_versions`.
    pub(crate) fn new(allowed_hosts: Vec<String>, supported_versions: Vec<ProtocolVersion>) -> Self {
        let allowed = allowed_hosts.iter().filter_map(|allowed| allowed_host(allowed)).collect();
        RequestChecks { allowed_hosts, allowed, supported_versions }
    }

    /// Only known headers, an allowed `Host`, no `Origin`, an `Accept` of
    /// JSON and SSE, one `Mcp-Method` naming `method`.
    pub(crate) fn headers_pass(&self, headers: &HeaderMap, method: &str) -> bool {
        // First the cheap test that tells the fast paths' requests apart.
        if single(headers, "mcp-method").is_none_or(|m| m.as_bytes() != method.as_bytes()) {
            return false;
        }
        if headers.keys().any(|name| !ALLOWED_HEADERS.contains(&name.as_str())) {
            return false;
        }
        let Some(host) = single(headers, header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        self.host_allowed(host) && accepts_json_and_sse(headers)
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

    /// Only known `_meta` keys (the common ones and `extra_keys`); a
    /// protocol version of 2026-07-28 or later that the handler supports and
    /// `MCP-Protocol-Version` repeats.
    pub(crate) fn meta_passes(&self, meta: &JsonObject, headers: &HeaderMap, extra_keys: &[&str]) -> bool {
        if meta.keys().any(|key| !ALLOWED_META_KEYS.contains(&key.as_str()) && !extra_keys.contains(&key.as_str())) {
            return false;
        }
        let Some(version) = meta.get("io.modelcontextprotocol/protocolVersion").and_then(|v| v.as_str()) else {
            return false;
        };
        self.version_passes(version, headers)
    }

    /// A protocol version of 2026-07-28 or later that the handler supports
    /// and `MCP-Protocol-Version` repeats.
    pub(crate) fn version_passes(&self, version: &str, headers: &HeaderMap) -> bool {
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

/// `Mcp-Name` is `name` in plain text (no Base64 form to decode).
pub(crate) fn name_matches(headers: &HeaderMap, name: &str) -> bool {
    let plain = !name.is_empty() && name.bytes().all(|b| (0x21..0x7f).contains(&b)) && !name.starts_with("=?base64?");
    plain && single(headers, "mcp-name").is_some_and(|h| h.as_bytes() == name.as_bytes())
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
pub(crate) fn error_status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// `message` (rmcp's, or bytes for bytes the same) as rmcp's transport
/// sends it (JSON, `status`), counted in
/// `answered`; `None` when it does not serialize (rmcp answers 500 then: let it).
pub(crate) fn respond(message: &impl Serialize, status: StatusCode, answered: &Arc<AtomicU64>) -> Option<Response> {
    // Sized for a typical answer, so serializing seldom grows it.
    let mut body = Vec::with_capacity(ANSWER_CAPACITY);
    serde_json::to_writer(&mut body, message).ok()?;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    answered.fetch_add(1, Ordering::Relaxed);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Some(response)
}

/// `T` read only from a JSON object: serde's derive also reads a struct
/// from an array of its fields, which is not the shape the fast paths serve
/// (the envelope check refuses an array at the top, a batch, and as params).
pub(crate) struct Object<T>(pub(crate) T);

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

/// A request id as the guard's envelope check reads it: a string, or an
/// integer written as one that fits in 64 bits (rmcp alone would also take
/// `1.0`).
pub(crate) fn request_id(raw: &RawValue) -> Option<NumberOrString> {
    let text = raw.get();
    if text.starts_with('"') {
        return serde_json::from_str::<Cow<'_, str>>(text).ok().map(|s| NumberOrString::String(s.into()));
    }
    serde_json::from_str::<i64>(text).ok().map(NumberOrString::Number)
}
