//! A `tools/call` whose answer is lost after the server created the task (a
//! load balancer's 502 when the instance dies mid-answer) is sent again with
//! the same idempotency key, and the client gets the one task the server
//! created; a call of a tool the server does not list as deduplicated is not
//! sent again.
//!
//! Between the library client and a real `mcp-tasks serve` sits a small HTTP
//! proxy that forwards every request and, for the first `tools/call`s, waits
//! for the server's whole answer and then replies 502 instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use mcp_tasks_client::{ClientError, ClientOptions, DeclineAll, IDEMPOTENCY_KEY_META_KEY, Silent, Started, TasksClient};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::serve_support;

/// Forwards to `upstream`; answers the first `cuts` `tools/call`s with 502
/// once the server has answered them.
struct CuttingProxy {
    upstream: String,
    http: reqwest::Client,
    cuts: AtomicUsize,
    /// The idempotency key of every `tools/call` that reached the server.
    call_keys: Mutex<Vec<Option<String>>>,
}

async fn forward(
    State(proxy): State<Arc<CuttingProxy>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let is_call = request["method"] == "tools/call";
    if is_call {
        let key = request["params"]["_meta"][IDEMPOTENCY_KEY_META_KEY].as_str().map(str::to_owned);
        proxy.call_keys.lock().await.push(key);
    }
    let mut upstream = proxy.http.request(method, format!("{}{}", proxy.upstream, uri.path())).body(body);
    for (name, value) in &headers {
        if name != "host" && name != "content-length" {
            upstream = upstream.header(name, value);
        }
    }
    let answer = upstream.send().await.expect("the server answers the proxy");
    let status = answer.status();
    let answer_headers = answer.headers().clone();
    let answer_body = answer.bytes().await.expect("the server's whole answer");
    if is_call && proxy.cuts.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
        return (StatusCode::BAD_GATEWAY, "the instance went away").into_response();
    }
    let mut response = (status, answer_body).into_response();
    for (name, value) in &answer_headers {
        if name != "content-length" && name != "transfer-encoding" {
            response.headers_mut().insert(name, value.clone());
        }
    }
    response
}

/// Serves the proxy on loopback; returns its MCP URL.
async fn start_proxy(proxy: Arc<CuttingProxy>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(forward).with_state(proxy);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/mcp")
}

fn proxy_to(server: &serve_support::Server, cuts: usize) -> Arc<CuttingProxy> {
    Arc::new(CuttingProxy {
        upstream: server.url.trim_end_matches("/mcp").to_owned(),
        http: reqwest::Client::new(),
        cuts: AtomicUsize::new(cuts),
        call_keys: Mutex::new(Vec::new()),
    })
}

fn stored_tasks(db: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn.prepare("SELECT id FROM tasks ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_answer_is_resent_with_its_key_and_yields_the_one_task() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let server = tokio::task::block_in_place(|| serve_support::spawn(&db, "127.0.0.1:0", &[]));
    let proxy = proxy_to(&server, 2);
    let url = start_proxy(proxy.clone()).await;

    let client = TasksClient::connect(ClientOptions::new(&url)).await.unwrap();
    let handle = match client.start("slow_compute", json!({"seconds": 60}), &DeclineAll, &Silent).await {
        Ok(Started::Task(handle)) => handle,
        other => panic!("{other:?}"),
    };

    let keys = proxy.call_keys.lock().await.clone();
    assert_eq!(keys.len(), 3, "two lost answers, then the one that arrived: {keys:?}");
    assert!(keys[0].is_some() && keys.iter().all(|k| *k == keys[0]), "one key for every send: {keys:?}");
    assert_eq!(stored_tasks(&db), vec![handle.task_id.clone()], "three sends created one task, the one handed back");

    // A second call is a new call: a new key, a second task.
    let other = match client.start("slow_compute", json!({"seconds": 60}), &DeclineAll, &Silent).await {
        Ok(Started::Task(handle)) => handle,
        other => panic!("{other:?}"),
    };
    assert_ne!(other.task_id, handle.task_id);
    let keys = proxy.call_keys.lock().await.clone();
    assert_ne!(keys[3], keys[0], "each call has its own key");
    assert_eq!(stored_tasks(&db).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_server_does_not_deduplicate_is_not_resent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let server = tokio::task::block_in_place(|| serve_support::spawn(&db, "127.0.0.1:0", &[]));
    let proxy = proxy_to(&server, 1);
    let url = start_proxy(proxy.clone()).await;

    let client = TasksClient::connect(ClientOptions::new(&url)).await.unwrap();
    // Not one of the server's durable tools: a second send might run twice.
    let e = client.start("not_a_durable_tool", json!({}), &DeclineAll, &Silent).await.unwrap_err();
    assert!(matches!(e, ClientError::Transport { .. }), "{e:?}");
    assert!(e.to_string().contains("502"), "{e}");
    assert_eq!(proxy.call_keys.lock().await.len(), 1, "sent once");
}
