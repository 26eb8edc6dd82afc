//! A task's attempts form one trace: each attempt's span is a child of the
//! trace context stored with the task at creation — the creating request's
//! span, itself a child of the client's `traceparent` — including the retry
//! after a transient failure. Spans are collected with the SDK's in-memory
//! exporter; the clock is a `ManualClock`.

use crate::support;

use mcp_tasks_core::Timestamp;
use mcp_tasks_runtime::trace_context::{TRACE_TARGET, request_span, traceparent_of};
use mcp_tasks_runtime::{CreateTask, ToolFailure};
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use support::*;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// The exporter every span of this test binary goes to. Global, not per
/// thread: a thread-local subscriber can lose callsites whose interest other
/// test threads cached first. Tests pick their spans out by trace id.
fn collect() -> &'static (InMemorySpanExporter, SdkTracerProvider) {
    static SPANS: std::sync::OnceLock<(InMemorySpanExporter, SdkTracerProvider)> = std::sync::OnceLock::new();
    SPANS.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
        let subscriber =
            tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in this binary");
        (exporter, provider)
    })
}

/// The finished spans of trace `trace`.
fn spans_of(trace: TraceId) -> Vec<SpanData> {
    let (exporter, provider) = collect();
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap().into_iter().filter(|s| s.span_context.trace_id() == trace).collect()
}

fn attribute(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes.iter().find(|kv| kv.key == Key::from(key.to_owned())).map(|kv| kv.value.clone())
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

#[tokio::test]
async fn a_retried_tasks_attempts_are_children_of_the_creating_request_in_the_clients_trace() {
    collect();
    let clock = clock();
    let tool = FnTool::new("flaky", |ctx| async move {
        ctx.set_status_message(format!("trying, attempt {}", ctx.attempt())).await.unwrap();
        if ctx.attempt() == 1 { Err(ToolFailure::new("upstream timeout")) } else { Ok(json!({"ok": true})) }
    });
    let store = memory();
    let rt = builder(store.clone(), &clock).tool(tool).build().unwrap();

    let client = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let request = request_span("tools/call", Some(&client), None);
    let created = rt.create_task(CreateTask::new("flaky", json!({}))).instrument(request.clone()).await.unwrap();
    let stored_parent = created.record.trace_parent.clone().expect("a trace context is stored");
    assert_eq!(Some(stored_parent.clone()), traceparent_of(&request));
    drop(request);

    assert_eq!(run_settled(&rt).await, 1);
    let retry_at = stored(&store, &created.record.id).await.run_at.unwrap();
    clock.set(Timestamp::from_millis(retry_at.as_millis()));
    assert_eq!(run_settled(&rt).await, 1);
    assert_eq!(stored(&store, &created.record.id).await.trace_parent, Some(stored_parent.clone()), "never changed");

    let client_trace = TraceId::from_hex(CLIENT_TRACE).unwrap();
    let spans = spans_of(client_trace);
    let requests = named(&spans, "tools/call");
    assert_eq!(requests.len(), 1, "{spans:#?}");
    let creation = requests[0];
    assert_eq!(creation.span_context.trace_id(), client_trace);
    assert_eq!(creation.parent_span_id, SpanId::from_hex(CLIENT_SPAN).unwrap(), "the request is the client's child");
    assert_eq!(
        stored_parent,
        format!("00-{CLIENT_TRACE}-{}-01", creation.span_context.span_id()),
        "the task stores the request span's context"
    );

    let attempts = named(&spans, "task.attempt");
    assert_eq!(attempts.len(), 2, "{spans:#?}");
    let mut numbers: Vec<Option<Value>> = attempts.iter().map(|a| attribute(a, "attempt")).collect();
    numbers.sort_by_key(|v| format!("{v:?}"));
    assert_eq!(numbers, vec![Some(Value::I64(1)), Some(Value::I64(2))]);
    for attempt in &attempts {
        assert_eq!(attempt.span_context.trace_id(), client_trace, "{attempt:#?}");
        assert_eq!(attempt.parent_span_id, creation.span_context.span_id(), "{attempt:#?}");
        assert_eq!(attribute(attempt, "task.id"), Some(Value::from(created.record.id.to_string())));
        assert_eq!(attribute(attempt, "tool"), Some(Value::from("flaky")));
    }
    // Each attempt's progress is a span of its own inside the attempt.
    let progress = named(&spans, "task.status_message");
    assert_eq!(progress.len(), 2, "{spans:#?}");
    for p in &progress {
        assert_eq!(p.span_context.trace_id(), client_trace);
        assert!(attempts.iter().any(|a| a.span_context.span_id() == p.parent_span_id), "{p:#?}");
    }
    assert_ne!(progress[0].parent_span_id, progress[1].parent_span_id, "one per attempt");
}

#[tokio::test]
async fn without_a_client_trace_the_creating_request_starts_one_and_a_malformed_one_is_ignored() {
    collect();
    let clock = clock();
    let store = memory();
    let rt = builder(store.clone(), &clock).tool(returning("t", json!({}))).build().unwrap();

    for client in [None, Some("00-not-a-trace-01")] {
        let request = request_span("tools/call", client, None);
        let created = rt.create_task(CreateTask::new("t", json!({}))).instrument(request.clone()).await.unwrap();
        drop(request);
        assert_eq!(run_settled(&rt).await, 1);
        let stored = created.record.trace_parent.clone().expect("a trace context is stored");
        let spans = spans_of(TraceId::from_hex(&stored[3..35]).unwrap());
        let creation = named(&spans, "tools/call")[0];
        assert_eq!(creation.parent_span_id, SpanId::INVALID, "a new trace's root ({client:?})");
        let attempt = named(&spans, "task.attempt")[0];
        assert_eq!(attempt.span_context.trace_id(), creation.span_context.trace_id());
        assert_eq!(attempt.parent_span_id, creation.span_context.span_id());
        assert_eq!(
            created.record.trace_parent,
            Some(format!("00-{}-{}-01", creation.span_context.trace_id(), creation.span_context.span_id()))
        );
    }
}

#[tokio::test]
async fn with_tracing_off_a_valid_client_trace_is_stored_as_it_came() {
    // No exporting layer on this thread: spans have no OpenTelemetry context.
    let _off = tracing::subscriber::set_default(tracing_subscriber::registry());
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let client = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let request = tracing::info_span!(target: TRACE_TARGET, "tools/call");
    let req = CreateTask { trace_parent: Some(client.clone()), ..CreateTask::new("t", json!({})) };
    let created = rt.create_task(req).instrument(request).await.unwrap();
    assert_eq!(created.record.trace_parent, Some(client));
}
