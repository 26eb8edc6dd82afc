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
use std::sync::atomic::AtomicU64;

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use rmcp::model::{JsonObject, NumberOrString, RequestMetaObject, ServerJsonRpcMessage, ServerResult};
use serde::Deserialize;

use crate::auth::Principal;
use crate::durable::DurableTasks;
pub use crate::fast_path::ALLOWED_HEADERS;
use crate::fast_path::{HandlerTraits, RequestChecks, error_status, name_matches, respond};
use crate::request_trace::meta_request_span;

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
    pub(crate) async fn answer(&self, parts: &Parts, body: &[u8]) -> Option<Response> {
        if !self.checks.headers_pass(&parts.headers, "tasks/get") {
            return None;
        }
        let request: GetEnvelope = serde_json::from_slice(body).ok()?;
        if request.jsonrpc != "2.0" || request.method != "tasks/get" {
            return None;
        }
        if !self.checks.meta_passes(&request.params.meta, &parts.headers, &[])
            || !name_matches(&parts.headers, &request.params.task_id)
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
        respond(&message, status, &self.answered)
    }
}
