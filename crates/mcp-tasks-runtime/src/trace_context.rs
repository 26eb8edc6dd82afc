//! A task's trace context: the W3C `traceparent` stored with the task at
//! creation, and the spans that join it — the request spans of the task
//! methods (children of a client's `_meta.traceparent`) and one span per
//! attempt (a child of the stored context), so a task's attempts form one
//! trace on whichever instance runs them, before and after a restart.
//!
//! The spans are `tracing` spans under [`TRACE_TARGET`]; they become
//! OpenTelemetry spans only where the `tracing-opentelemetry` layer is
//! installed (`serve --otlp-endpoint`). Without it, no context is made and
//! none is read: a client's own `traceparent` is still stored, so a later
//! instance that exports can join it.

use std::collections::HashMap;

use mcp_tasks_core::TaskRecord;
use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `tracing` target of every span made here: a log filter that keeps
/// the runtime's lines leaves these spans out, and the exporting layer
/// takes exactly these.
pub const TRACE_TARGET: &str = "mcp_tasks::trace";

/// The W3C header name of the trace context, also its `_meta` key (MCP's
/// convention for trace propagation).
pub const TRACEPARENT: &str = "traceparent";

/// The W3C header name of vendor trace state, also its `_meta` key.
pub const TRACESTATE: &str = "tracestate";

/// The remote parent a W3C `traceparent` (and optional `tracestate`)
/// names; `None` when it is malformed (logged at debug: a client's bad
/// trace header is never an error).
pub fn parse_parent(traceparent: &str, tracestate: Option<&str>) -> Option<Context> {
    let mut carrier = HashMap::with_capacity(2);
    carrier.insert(TRACEPARENT.to_owned(), traceparent.to_owned());
    if let Some(state) = tracestate {
        carrier.insert(TRACESTATE.to_owned(), state.to_owned());
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_valid() {
        Some(parent)
    } else {
        tracing::debug!(traceparent, "ignoring a malformed traceparent");
        None
    }
}

/// `traceparent` itself when it is well-formed (what a task stores when
/// no span of its own is exported), else `None`.
pub fn valid_traceparent(traceparent: &str) -> Option<String> {
    parse_parent(traceparent, None).map(|_| traceparent.to_owned())
}

/// The W3C `traceparent` of `span` as exported, or `None` when no
/// exporting layer made it a span with a trace (tracing off).
pub fn traceparent_of(span: &tracing::Span) -> Option<String> {
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut carrier: HashMap<String, String> = HashMap::with_capacity(2);
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    carrier.remove(TRACEPARENT)
}

/// The request span of a task method (`tools/call`, `tasks/get`, …): a
/// child of the client's trace when `traceparent` is a valid W3C trace
/// context, else the root of a new trace.
pub fn request_span(method: &'static str, traceparent: Option<&str>, tracestate: Option<&str>) -> tracing::Span {
    let span = tracing::info_span!(target: TRACE_TARGET, "mcp.request", otel.name = method, rpc.method = method);
    // A span no layer takes (export off) costs no parse.
    if !span.is_disabled()
        && let Some(parent) = traceparent.and_then(|t| parse_parent(t, tracestate))
    {
        // Fails only when no exporting layer is installed: nothing to join then.
        let _ = span.set_parent(parent);
    }
    span
}

/// The span one attempt of `record` runs in: a child of the trace context
/// stored with the task, so every attempt, on any instance, is in the
/// task's trace.
/// `holder` is the claim's lease holder, which names the instance.
pub(crate) fn attempt_span(record: &TaskRecord, holder: &str) -> tracing::Span {
    // A root in this process: an attempt dispatched at creation starts
    // inside the creating request's span, and a child would hold that span
    // open (unexported) until the attempt ends. Its trace parent is the
    // stored context, set below, however it was started.
    let span = tracing::info_span!(
        target: TRACE_TARGET,
        parent: None,
        "task.attempt",
        task.id = %record.id,
        tool = %record.tool,
        // Signed: the bridge records unsigned integers as strings.
        attempt = i64::from(record.attempt),
        executor = holder,
    );
    if !span.is_disabled()
        && let Some(parent) = record.trace_parent.as_deref().and_then(|t| parse_parent(t, None))
    {
        let _ = span.set_parent(parent);
    }
    span
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_well_formed_traceparent_is_kept_and_a_malformed_one_is_not() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(valid_traceparent(good).as_deref(), Some(good));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "not a trace",
        ] {
            assert_eq!(valid_traceparent(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn without_an_exporting_layer_a_span_has_no_traceparent() {
        let span = request_span("tools/call", Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), None);
        assert_eq!(traceparent_of(&span), None);
    }
}
