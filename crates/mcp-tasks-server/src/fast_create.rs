//! The fast path for creations: a `tools/call` of a durable tool answered in
//! the front layer, ahead of rmcp, which otherwise builds and spawns a whole
//! stateless service per request and buffers its untagged message enums
//! (most of a creation's cost; see BENCHMARKS.md, "Profiles").
//!
//! Only a request whose every part rmcp would accept as it is takes it: a
//! single JSON-RPC `tools/call` of a tool this server's durable tools own
//! (not a tool of the handler, not a front of a durable tool), with `name`,
//! optional `arguments` and MCP 2026-07-28 per-request `_meta` (protocol
//! version, client capabilities declaring the tasks extension — a task-
//! augmented call —, client info, optionally `traceparent`/`tracestate` and
//! the idempotency key) and nothing else in its params (no MRTR
//! `inputResponses`/`requestState`); the headers the
//! [`fast_get`](crate::fast_get) path takes, with `Mcp-Method: tools/call`
//! and `Mcp-Name` equal to the tool's name; and a tool whose input schema
//! routes no argument into an `Mcp-Param-*` header (`x-mcp-header`), which
//! rmcp would check. Anything else goes to rmcp unchanged.
//!
//! The answer is built by the code rmcp's path runs (that of
//! [`DurableTasks::call_tool`]: typed-argument check, principal, idempotency
//! key, `traceparent`, the runtime's creation with its limits and metrics),
//! wrapped in rmcp's own message type and serialized with serde, with the
//! HTTP status rmcp's stateless transport gives each JSON-RPC error code.
//! The differential test (`tests/fast_create_differential.rs`) holds the two
//! paths to the same bytes and the same stored tasks.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use rmcp::model::{JsonObject, RequestMetaObject, ServerJsonRpcMessage, ServerResult};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::auth::Principal;
use crate::durable::DurableTasks;
use crate::fast_path::{HandlerTraits, Object, RequestChecks, error_status, name_matches, request_id, respond};
use crate::wire::IDEMPOTENCY_KEY_META_KEY;

/// The `_meta` keys a creation may carry beyond those every fast path takes.
const CREATION_META_KEYS: [&str; 1] = [IDEMPOTENCY_KEY_META_KEY];

/// What the fast path needs of the server behind it (built by
/// [`TaskServer::router`](crate::TaskServer::router)).
#[derive(Clone)]
pub struct FastCreate {
    tasks: DurableTasks,
    /// The transport's and the handler's checks.
    checks: RequestChecks,
    /// Durable tools whose schema maps an argument to an `Mcp-Param-*`
    /// header: rmcp checks those headers, so their calls go to rmcp.
    header_mapped: HashSet<String>,
    /// Creations answered here, for [`TaskServer::fast_create_answers`](crate::TaskServer::fast_create_answers).
    answered: Arc<AtomicU64>,
}

impl std::fmt::Debug for FastCreate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastCreate").field("checks", &self.checks).finish_non_exhaustive()
    }
}

/// A `tools/call` body of the form taken here: anything more fails to parse
/// (and goes to rmcp). `jsonrpc` and `id` stay raw, to be read as the
/// guard's envelope check reads them (see [`FastCreate::answer`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: &'a RawValue,
    #[serde(borrow)]
    id: &'a RawValue,
    method: String,
    params: Object<CallParams>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    /// rmcp reads a missing or `null` `arguments` as none, then as `{}`.
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta")]
    meta: JsonObject,
}

impl FastCreate {
    /// The fast path in front of a handler with `traits`, when it advertises
    /// the tasks extension; `allowed_hosts` as given to rmcp's transport.
    pub(crate) fn new(
        tasks: DurableTasks,
        allowed_hosts: Vec<String>,
        traits: HandlerTraits,
        answered: Arc<AtomicU64>,
    ) -> Option<Self> {
        if !traits.advertises_tasks {
            return None;
        }
        let header_mapped = tasks
            .tools()
            .iter()
            .filter(|tool| {
                tool.input_schema.contains_key("x-mcp-header") || tool.input_schema.values().any(mentions_header_mapping)
            })
            .map(|tool| tool.name.to_string())
            .collect();
        let checks = RequestChecks::new(allowed_hosts, traits.supported_versions);
        Some(FastCreate { tasks, checks, header_mapped, answered })
    }

    /// The answer to a `tools/call`, or `None` when the request is not one
    /// the fast path reproduces exactly.
    ///
    /// The guard calls it before its envelope check ([`crate::envelope`]),
    /// so that a creation is parsed once: every body taken here passes that
    /// check. The typed parse refuses what the check refuses (not an object,
    /// a repeated or unknown member, a number no `f64` holds, a non-string
    /// `method` or `name`, non-object `arguments`); `jsonrpc` must be the
    /// exact text `"2.0"` and `id` a string or an integer in 64 bits, read
    /// as the check reads them (rmcp alone would also take `1.0`).
    pub(crate) async fn answer(&self, parts: &Parts, body: &[u8]) -> Option<Response> {
        if !self.checks.headers_pass(&parts.headers, "tools/call") {
            return None;
        }
        let Object(request): Object<CallEnvelope<'_>> = serde_json::from_slice(body).ok()?;
        let id = request_id(request.id)?;
        let Object(CallParams { name, arguments, meta }) = request.params;
        if request.jsonrpc.get() != "\"2.0\"" || request.method != "tools/call" {
            return None;
        }
        if !self.tasks.owns(&name) || self.header_mapped.contains(&name) {
            return None;
        }
        if !self.checks.meta_passes(&meta, &parts.headers, &CREATION_META_KEYS) || !name_matches(&parts.headers, &name) {
            return None;
        }
        let meta = RequestMetaObject::from(meta);
        let capabilities = meta.client_capabilities()?;
        // A client without the tasks extension gets the result inline or
        // -32021: rmcp's business (the inline wait watches its cancellation).
        if !capabilities.supports_tasks() {
            return None;
        }
        let principal = parts.extensions.get::<Principal>().map(|p| p.0.clone());
        let answer = self.tasks.answer_call_parts(name, arguments.unwrap_or_default(), &meta, capabilities, principal).await;
        let (message, status) = match answer {
            Ok(response) => (ServerJsonRpcMessage::response(ServerResult::from(response), id), StatusCode::OK),
            Err(error) => {
                let status = error_status(error.code);
                (ServerJsonRpcMessage::error(error, Some(id)), status)
            }
        };
        respond(&message, status, &self.answered)
    }
}

/// Whether a schema names `x-mcp-header` anywhere (a superset of what rmcp
/// reads as a header mapping: when in doubt, rmcp answers).
fn mentions_header_mapping(schema: &serde_json::Value) -> bool {
    match schema {
        serde_json::Value::Object(map) => map.contains_key("x-mcp-header") || map.values().any(mentions_header_mapping),
        serde_json::Value::Array(items) => items.iter().any(mentions_header_mapping),
        _ => false,
    }
}
