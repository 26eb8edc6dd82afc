//! The real `serve` process answers `GET /metrics` without a token (auth on),
//! with its runtime's counts and SQLite's group commits; `--no-metrics`
//! turns the route off.

use crate::serve_support;
use std::io::{Read, Write};
use std::time::Duration;

use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use serde_json::json;
use serve_support::spawn;

/// A plain HTTP/1.1 GET of `path` on `addr`: status line and body.
pub(crate) fn http_get(addr: &str, path: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.lines().next().unwrap_or("").to_owned(), body.to_owned())
}

/// The value of the sample line that starts with `series ` exactly.
pub(crate) fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_exports_metrics_without_a_token_and_can_turn_them_off() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, "\"t-ops\" = \"ops\"\n").unwrap();
    let tokens = tokens.to_str().unwrap();
    let mut server = spawn(&dir.path().join("tasks.db"), "127.0.0.1:0", &["--auth-tokens", tokens]);
    let mut options = ClientOptions::new(&server.url);
    options.bearer_token = Some("t-ops".to_owned());
    let client = TasksClient::connect(options).await.unwrap();
    match client.start("flaky_upstream", json!({"failures": 0, "ms": 0}), &DeclineAll, &Silent).await.unwrap() {
        Started::Task(_) => {}
        other => panic!("not a task: {other:?}"),
    }

    let (status, body) = http_get(&server.listen_addr(), "/metrics");
    assert!(status.contains(" 200 "), "{status}\n{body}");
    assert_eq!(sample(&body, "mcp_tasks_created_total{tool=\"flaky_upstream\"}"), Some(1.0), "{body}");
    // Its one attempt started at creation, or by a claim if it came before
    // the first claim had looked at the queue: counted once either way.
    let started: f64 = ["dispatch", "claim"]
        .iter()
        .filter_map(|via| sample(&body, &format!("mcp_tasks_attempts_started_total{{via=\"{via}\"}}")))
        .sum();
    assert_eq!(started, 1.0, "{body}");
    let commits = sample(&body, "mcp_tasks_store_commits_total").expect("SQLite's group commits are exported");
    let writes = sample(&body, "mcp_tasks_store_committed_writes_total").unwrap();
    assert!(commits >= 1.0 && writes >= commits, "{commits} commits, {writes} writes");
    server.child.kill().unwrap();
    server.child.wait().unwrap();

    let mut quiet = spawn(&dir.path().join("other.db"), "127.0.0.1:0", &["--no-metrics"]);
    let (status, _) = http_get(&quiet.listen_addr(), "/metrics");
    assert!(status.contains(" 404 "), "{status}");
    let (status, _) = http_get(&quiet.listen_addr(), "/healthz");
    assert!(status.contains(" 200 "), "{status}");
    quiet.child.kill().unwrap();
    quiet.child.wait().unwrap();
}
