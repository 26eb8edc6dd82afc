//! A client's W3C `traceparent` in `_meta` over real HTTP: the request span
//! of `tools/call` (and of `tasks/get`) is its child and the task stores the
//! request's trace context; a malformed one is ignored, never an error; with
//! no exporting layer the client's own valid context is what is stored.

use crate::common;
use common::*;
use mcp_tasks_core::TaskId;
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt;

const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// A raw request of `method` with `traceparent` (if any) in `_meta`.
async fn send(url: &str, method: &str, name: &str, mut params: Value, traceparent: Option<&str>) -> Value {
    params["_meta"] = request_meta(true);
    if let Some(t) = traceparent {
        params["_meta"]["traceparent"] = json!(t);
        params["_meta"]["tracestate"] = json!("vendor=1");
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, reply) = post_raw(url, body.to_string(), &[("Mcp-Method", method), ("Mcp-Name", name)]).await;
    assert_eq!(status, 200, "{reply}");
    reply
}

async fn start_report(url: &str, traceparent: Option<&str>) -> String {
    let call = json!({"name": "long_running_report", "arguments": {"sections": 1, "ms": 0}});
    let created = send(url, "tools/call", "long_running_report", call, traceparent).await;
    created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned()
}

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

async fn stored_trace(h: &Harness, id: &str) -> Option<String> {
    h.server.runtime().get_task(&TaskId(id.to_owned()), None).await.unwrap().record.trace_parent
}

#[tokio::test]
async fn the_request_span_is_the_clients_child_and_the_task_stores_its_context() {
    let (exporter, provider) = collect();
    let h = start().await;

    let client = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let id = start_report(&h.url, Some(&client)).await;
    let got = send(&h.url, "tasks/get", &id, json!({"taskId": id}), Some(&client)).await;
    assert!(got["result"]["status"].is_string(), "{got}");
    assert_eq!(h.server.fast_get_answers(), 1, "the poll took the fast path, whose span is checked here");
    assert_eq!(h.server.fast_create_answers(), 1, "so did the creation");
    provider.force_flush().unwrap();
    let trace = TraceId::from_hex(CLIENT_TRACE).unwrap();
    let spans: Vec<_> =
        exporter.get_finished_spans().unwrap().into_iter().filter(|s| s.span_context.trace_id() == trace).collect();
    let parent = SpanId::from_hex(CLIENT_SPAN).unwrap();
    let call = spans.iter().find(|s| s.name == "tools/call").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!((call.span_context.trace_id(), call.parent_span_id), (trace, parent));
    assert_eq!(call.span_context.trace_state().header(), "vendor=1", "tracestate is carried");
    let poll = spans.iter().find(|s| s.name == "tasks/get").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!((poll.span_context.trace_id(), poll.parent_span_id), (trace, parent));
    assert_eq!(
        stored_trace(&h, &id).await,
        Some(format!("00-{CLIENT_TRACE}-{}-01", call.span_context.span_id())),
        "the task's attempts will be children of the creating request"
    );
    h.stop().await;
}

#[tokio::test]
async fn without_export_a_valid_client_trace_is_stored_and_a_malformed_one_is_ignored() {
    // No exporting layer on this thread (the other test installs a global one).
    let _off = tracing::subscriber::set_default(tracing_subscriber::registry());
    let h = start().await;
    let client = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let id = start_report(&h.url, Some(&client)).await;
    assert_eq!(stored_trace(&h, &id).await, Some(client));

    for malformed in ["00-xyz-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""] {
        let id = start_report(&h.url, Some(malformed)).await;
        assert_eq!(stored_trace(&h, &id).await, None, "{malformed:?}");
        let got = send(&h.url, "tasks/get", &id, json!({"taskId": id}), Some(malformed)).await;
        assert!(got["result"]["status"].is_string(), "a bad trace header is never an error: {got}");
    }
    // A non-string traceparent is ignored too.
    let mut params = json!({"name": "long_running_report", "arguments": {"sections": 1, "ms": 0}});
    let mut meta = request_meta(true);
    meta["traceparent"] = json!(7);
    params["_meta"] = meta;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let headers = [("Mcp-Method", "tools/call"), ("Mcp-Name", "long_running_report")];
    let (status, reply) = post_raw(&h.url, body.to_string(), &headers).await;
    assert_eq!(status, 200, "{reply}");
    assert!(reply["result"]["taskId"].is_string(), "{reply}");
    h.stop().await;
}
