//! The follow loop's edges against real sockets: a request that never gets
//! an answer times out, a failure retrying cannot fix ends a follow at once,
//! and by default the server's hint sets the pace.

use crate::support;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_tasks_client::{
    ClientError, ClientOptions, DeclineAll, PacingMode, Silent, Started, TaskEvent, TasksClient, TransportFailure,
};
use mcp_tasks_core::PollPolicy;
use serde_json::json;
use support::{Settings, TestServer, serve};

/// A TCP listener that accepts every connection and never answers.
async fn silent_listener() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let join = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (format!("http://{addr}/mcp"), join)
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let (url, join) = silent_listener().await;
    let mut o = ClientOptions::new(&url);
    o.request_timeout = Some(Duration::from_millis(300));
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(30), TasksClient::connect(o))
        .await
        .expect("connect must give up by itself")
        .unwrap_err();
    assert!(matches!(&err, ClientError::Connect { failure: TransportFailure::TimedOut, .. }), "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    join.abort();
}

#[tokio::test]
async fn a_request_that_never_gets_its_answer_times_out() {
    // Connected to a real server, then the server is replaced by one that never answers.
    let running = serve(TestServer::new(Settings::default())).await;
    let addr = running.addr;
    let mut o = ClientOptions::new(&running.url);
    o.request_timeout = Some(Duration::from_millis(300));
    let client = TasksClient::connect(o).await.unwrap();
    running.stop().await;
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let err = tokio::time::timeout(Duration::from_secs(30), client.get("any"))
        .await
        .expect("tasks/get must give up by itself")
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport { method: "tasks/get", failure: TransportFailure::TimedOut, .. }),
        "{err}"
    );
    assert!(err.is_transient());
    hold.abort();
}

#[tokio::test]
async fn a_failure_retrying_cannot_fix_ends_the_follow_at_once() {
    let running = serve(TestServer::new(Settings { step_ms: 10_000, ..Settings::default() })).await;
    let addr = running.addr;
    let mut o = ClientOptions::new(&running.url);
    o.poll = PollPolicy { initial_ms: 5.0, max_ms: 40.0, ..PollPolicy::default() };
    o.give_up_after = Duration::from_secs(600);
    let client = TasksClient::connect(o).await.unwrap();
    let Started::Task(handle) = client.start("slow", json!({"steps": 1}), &DeclineAll, &Silent).await.unwrap() else {
        panic!("task expected")
    };
    running.stop().await;
    // The same address now refuses every request with HTTP 401.
    let router = axum::Router::new().fallback(|| async { axum::http::StatusCode::UNAUTHORIZED });
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let err = tokio::time::timeout(Duration::from_secs(30), client.follow(&handle, &DeclineAll, &Silent))
        .await
        .expect("a 401 must end the follow, not be retried for ten minutes")
        .unwrap_err();
    assert!(matches!(err.transport_failure(), Some(TransportFailure::Unauthorized { .. })), "{err}");
    assert!(!err.is_transient());
    server.abort();
}

#[tokio::test]
async fn by_default_the_servers_hint_is_the_pace() {
    // pollIntervalMs 60, a window of 30 s: every delay in [30, 60] ms, though
    // the client's own backoff would stay at or under 40 ms.
    let settings = Settings { poll_interval_ms: 60, step_ms: 40, ..Settings::default() };
    let running = serve(TestServer::new(settings)).await;
    let delays = |pacing: PacingMode| {
        let url = running.url.clone();
        async move {
            let mut o = ClientOptions::new(&url);
            o.poll = PollPolicy { initial_ms: 5.0, max_ms: 40.0, ..PollPolicy::default() };
            o.jitter_seed = Some(7);
            o.pacing = pacing;
            let client = TasksClient::connect(o).await.unwrap();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let record = {
                let seen = seen.clone();
                move |e: &TaskEvent| {
                    if let TaskEvent::Waiting { delay, .. } = e {
                        seen.lock().unwrap().push(delay.as_secs_f64() * 1000.0);
                    }
                }
            };
            client.call("slow", json!({"steps": 4}), &DeclineAll, &record).await.unwrap();
            seen.lock().unwrap().clone()
        }
    };
    let paced = delays(ClientOptions::new("http://x/mcp").pacing).await;
    assert!(paced.len() >= 2, "{paced:?}");
    assert!(paced.iter().all(|d| (29.9..=60.1).contains(d)), "{paced:?}");
    let floored = delays(PacingMode::HintAsFloor).await;
    assert!(floored.iter().all(|d| *d <= 40.1), "{floored:?}");
    running.stop().await;
}
