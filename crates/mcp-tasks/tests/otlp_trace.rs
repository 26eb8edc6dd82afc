//! `serve --otlp-endpoint` on real processes: a client's `traceparent` in
//! `_meta` starts a task; the server exporting to a real OTLP/HTTP receiver
//! (an axum endpoint here decoding the protobuf `ExportTraceServiceRequest`)
//! is SIGKILLed mid-attempt and started again on the same file. The spans of
//! the attempt before the kill (its progress, exported while it ran) and of
//! the attempt after the restart carry the client's trace id, and the new
//! attempt is a child of the creating request: the trace context is durable
//! with the task. The second process exports only at shutdown, so its spans
//! arriving shows that SIGTERM flushes the exporter.

use crate::serve_support;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use serde_json::{Value, json};
use serve_support::spawn_with_env;

const CLIENT_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_SPAN: &str = "b7ad6b7169203331";

/// One span as the receiver got it.
#[derive(Debug, Clone)]
struct Received {
    instance: String,
    service: String,
    name: String,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    attributes: Vec<KeyValue>,
}

impl Received {
    fn attribute(&self, key: &str) -> Option<any_value::Value> {
        self.attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.clone()).and_then(|v| v.value)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(value: Option<&AnyValue>) -> String {
    match value.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        _ => String::new(),
    }
}

/// An OTLP/HTTP receiver on loopback: its base URL and what it received.
async fn receiver() -> (String, Arc<Mutex<Vec<Received>>>) {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let kept = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| {
            let kept = kept.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf trace export");
                for resource_spans in request.resource_spans {
                    let attrs = resource_spans.resource.map(|r| r.attributes).unwrap_or_default();
                    let of = |key: &str| text(attrs.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.as_ref()));
                    let (instance, service) = (of("service.instance.id"), of("service.name"));
                    for scope in resource_spans.scope_spans {
                        for span in scope.spans {
                            kept.lock().unwrap().push(Received {
                                instance: instance.clone(),
                                service: service.clone(),
                                name: span.name,
                                trace_id: hex(&span.trace_id),
                                span_id: hex(&span.span_id),
                                parent_span_id: hex(&span.parent_span_id),
                                attributes: span.attributes,
                            });
                        }
                    }
                }
                ([("content-type", "application/x-protobuf")], ExportTraceServiceResponse::default().encode_to_vec())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, spans)
}

/// Waits (bounded) until a received span satisfies `found`; returns it.
async fn wait_for_span(spans: &Arc<Mutex<Vec<Received>>>, what: &str, found: impl Fn(&Received) -> bool) -> Received {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(span) = spans.lock().unwrap().iter().find(|s| found(s)) {
            return span.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "no {what} arrived; got {:#?}", spans.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A raw MCP request carrying `traceparent` in `_meta`.
async fn mcp(url: &str, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "otlp-test", "version": "0"},
        "traceparent": format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"),
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The instance id a server logged for its exported spans.
fn instance_of(server: &serve_support::Server) -> String {
    let line = server.wait_for_log("service.instance.id", Duration::from_secs(10));
    line.rsplit("service.instance.id ").next().unwrap().trim_end_matches(')').trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_attempts_before_and_after_a_crash_are_in_the_clients_trace() {
    let (collector, spans) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    // The first process sends each batch within 100 ms, so the attempt's
    // progress leaves before the kill.
    let mut first =
        spawn_with_env(&db, "127.0.0.1:0", &["--otlp-endpoint", &collector], &[("OTEL_BSP_SCHEDULE_DELAY", "100")]);
    let first_instance = instance_of(&first);
    let url = first.url.clone();

    let created = mcp(
        &url,
        "tools/call",
        "long_running_report",
        json!({"name": "long_running_report", "arguments": {"sections": 4, "ms": 750, "topic": "traces"}}),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();

    // Attempt 1's first progress span, exported while the attempt runs.
    let before =
        wait_for_span(&spans, "progress of attempt 1", |s| s.name == "task.status_message" && s.instance == first_instance)
            .await;
    first.child.kill().unwrap(); // SIGKILL, mid-attempt
    first.child.wait().unwrap();

    // The second process exports only at shutdown (a minute's batch delay).
    let mut second = spawn_with_env(
        &db,
        &first.listen_addr(),
        &["--otlp-endpoint", &collector, "--shutdown-grace", "1s"],
        &[("OTEL_BSP_SCHEDULE_DELAY", "60000")],
    );
    let second_instance = instance_of(&second);
    assert_ne!(first_instance, second_instance);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let got = mcp(&url, "tasks/get", &id, json!({"taskId": id})).await;
        if got["result"]["status"] == "completed" {
            break;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        assert!(tokio::time::Instant::now() < deadline, "the task never completed after the restart: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    second.terminate();
    assert!(second.child.wait().unwrap().success());
    let after = wait_for_span(&spans, "attempt 2", |s| s.name == "task.attempt" && s.instance == second_instance).await;

    // The creating request: the client's child, in the client's trace.
    let creation =
        wait_for_span(&spans, "the creating request", |s| s.name == "tools/call" && s.instance == first_instance).await;
    assert_eq!(creation.service, "mcp-tasks");
    assert_eq!((creation.trace_id.as_str(), creation.parent_span_id.as_str()), (CLIENT_TRACE, CLIENT_SPAN));

    // Before the crash: attempt 1's progress is in the client's trace, under
    // attempt 1's span (which the kill kept from ending, so never sent).
    assert_eq!(before.trace_id, CLIENT_TRACE, "{before:#?}");
    assert_ne!(before.parent_span_id, creation.span_id, "under the attempt, not the request: {before:#?}");

    // After the restart: attempt 2, another process, the same trace, a
    // child of the creating request as attempt 1 was.
    assert_eq!(after.trace_id, CLIENT_TRACE, "{after:#?}");
    assert_eq!(after.parent_span_id, creation.span_id, "{after:#?}");
    assert_eq!(after.attribute("attempt"), Some(any_value::Value::IntValue(2)), "{after:#?}");
    assert_eq!(after.attribute("task.id"), Some(any_value::Value::StringValue(id.clone())));
    let progress_after: Vec<Received> = spans
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.name == "task.status_message" && s.instance == second_instance)
        .cloned()
        .collect();
    assert_eq!(progress_after.len(), 4, "one per section: {progress_after:#?}");
    assert!(progress_after.iter().all(|s| s.trace_id == CLIENT_TRACE && s.parent_span_id == after.span_id));
    // Polls are spans of the client's trace too.
    assert!(spans.lock().unwrap().iter().any(|s| s.name == "tasks/get" && s.trace_id == CLIENT_TRACE));
}
