//! The span of a task method's request, a child of the trace context the
//! client put in `_meta` (`traceparent`, `tracestate`: MCP's convention for
//! W3C trace context). A malformed one is ignored, never an error.

use mcp_tasks_runtime::trace_context::{self, TRACEPARENT, TRACESTATE};
use rmcp::model::RequestMetaObject;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

/// The client's `_meta.traceparent`, when it is a string.
pub(crate) fn meta_traceparent(meta: &RequestMetaObject) -> Option<&str> {
    meta.get(TRACEPARENT).and_then(Value::as_str)
}

/// The span `method`'s request runs in: a child of the client's trace when
/// it sent a valid one in `_meta`, else the root of a new trace.
pub(crate) fn request_span(method: &'static str, cx: &RequestContext<RoleServer>) -> tracing::Span {
    meta_request_span(method, &cx.meta)
}

/// [`request_span`] from the request's `_meta` alone (the fast path has no
/// rmcp context).
pub(crate) fn meta_request_span(method: &'static str, meta: &RequestMetaObject) -> tracing::Span {
    let traceparent = meta_traceparent(meta);
    let tracestate = meta.get(TRACESTATE).and_then(Value::as_str);
    trace_context::request_span(method, traceparent, tracestate)
}
