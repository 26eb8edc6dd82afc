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
//! [`DurableTasks::get_task`]) and serialized with serde from borrowed
//! parts to the bytes rmcp's own message type gives (`get_answer.rs`),
//! with the HTTP status rmcp's stateless transport gives each JSON-RPC
//! error code. The differential test
//! (`tests/fast_get_differential.rs`) holds the two paths to the same bytes.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use mcp_tasks_runtime::trace_context;
use rmcp::model::{ClientCapabilities, NumberOrString, ServerJsonRpcMessage, ServerResult};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::auth::Principal;
use crate::durable::{DurableTasks, with_result_text};
use crate::envelope;
pub use crate::fast_path::ALLOWED_HEADERS;
use crate::fast_path::{HandlerTraits, Object, RequestChecks, error_status, name_matches, request_id, respond};
use crate::get_answer::GetAnswer;

/// What the fast path needs of the server behind it (built by
/// [`TaskServer::router`](crate::TaskServer::router)).
#[derive(Clone)]
pub struct FastGet {
    tasks: DurableTasks,
    /// The transport's and the handler's checks.
    checks: RequestChecks,
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
        let id = request_id(envelope.id)?;
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
        f.debug_struct("FastGet").field("checks", &self.checks).finish_non_exhaustive()
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
            checks: RequestChecks::new(allowed_hosts, traits.supported_versions),
            answered,
        })
    }

    /// The answer to a `tasks/get` that passed the guard's checks, or `None`
    /// when the request is not one the fast path reproduces exactly.
    pub(crate) async fn answer(&self, parts: &Parts, request: GetRequest<'_>) -> Option<Response> {
        if !self.checks.headers_pass(&parts.headers, "tasks/get") {
            return None;
        }
        let meta = &request.meta;
        if !self.checks.version_passes(&meta.protocol_version, &parts.headers)
            || !name_matches(&parts.headers, &request.task_id)
        {
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
        let answer = match self.tasks.answer_get_unparsed(task_id, principal, capabilities, span).await {
            Ok((result, result_text)) => {
                if let Some(borrowed) = GetAnswer::new(&request.id, &result, result_text.as_deref()) {
                    return respond(&borrowed, StatusCode::OK, &self.answered);
                }
                with_result_text(result, result_text)
            }
            Err(error) => Err(error),
        };
        let (message, status) = match answer {
            Ok(result) => (ServerJsonRpcMessage::response(ServerResult::GetTaskResult(result), request.id), StatusCode::OK),
            Err(error) => {
                let status = error_status(error.code);
                (ServerJsonRpcMessage::error(error, Some(request.id)), status)
            }
        };
        respond(&message, status, &self.answered)
    }
}
