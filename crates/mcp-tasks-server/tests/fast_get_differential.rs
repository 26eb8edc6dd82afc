//! The `tasks/get` fast path answers exactly as rmcp would: each request is
//! sent to the server with the fast path and to the same server (same
//! runtime, same store) with it off, and the two answers must agree in
//! status, headers and body bytes, and record the same poll timestamp.

use std::sync::Arc;
use std::time::Duration;

use crate::common;
use common::*;
use mcp_tasks_core::{Clock, ManualClock, TaskId, Timestamp};
use mcp_tasks_server::{TaskServer, TokenMap};
use serde_json::{Value, json};

/// One answer, as the client sees it.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    /// Every header but `date`, in order.
    headers: Vec<(String, String)>,
    rate_limit_policy: Option<String>,
    body: String,
}

/// How a poll is sent.
#[derive(Clone, Copy)]
struct Caller<'a> {
    token: Option<&'a str>,
    traceparent: Option<&'a str>,
    /// Whether the client declares elicitation (else an input request is `-32021`).
    elicitation: bool,
}

async fn poll(url: &str, id: &str, caller: Caller<'_>) -> Answer {
    let Caller { token, traceparent, elicitation } = caller;
    let mut meta = request_meta(true);
    if elicitation {
        meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({"form": {}});
    }
    if let Some(tp) = traceparent {
        meta["traceparent"] = json!(tp);
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "params": {"taskId": id, "_meta": meta}});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tasks/get")
        .header("Mcp-Name", id);
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    let response = request.body(body.to_string()).send().await.unwrap();
    let headers = response
        .headers()
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect();
    let rate_limit_policy = response.headers().get("ratelimit-policy").map(|v| v.to_str().unwrap().to_owned());
    Answer { status: response.status().as_u16(), headers, rate_limit_policy, body: response.text().await.unwrap() }
}

/// The same server, served again with the fast path off.
async fn serve_without_fast_path(server: &TaskServer) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.with_fast_get(false).serve(listener, async move {
        let _ = stopped.await;
    }));
    (url, stop)
}

async fn last_polled(server: &TaskServer, id: &str) -> Option<Timestamp> {
    server.runtime().flush_polls().await.unwrap();
    server.runtime().store().get(&TaskId(id.to_owned())).await.unwrap().map(|r| r.last_polled_at).unwrap_or_default()
}

/// Polls `id` through both paths (fast first, at one instant; then rmcp, a
/// second later) and checks they answer alike and record the poll alike.
async fn compare(h: &Harness, slow_url: &str, clock: &ManualClock, id: &str, caller: Caller<'_>) -> Answer {
    let before = h.server.fast_get_answers();
    let polled_before = last_polled(&h.server, id).await;
    clock.advance(Duration::from_secs(1));
    let fast = poll(&h.url, id, caller).await;
    let fast_polled = last_polled(&h.server, id).await;
    assert_eq!(h.server.fast_get_answers(), before + 1, "the fast path answered {id}: {fast:?}");
    let fast_time = clock.now();

    clock.advance(Duration::from_secs(1));
    let slow = poll(slow_url, id, caller).await;
    let slow_polled = last_polled(&h.server, id).await;
    assert_eq!(h.server.fast_get_answers(), before + 1, "rmcp answered {id}");
    assert_eq!(fast, slow, "fast path and rmcp differ for {id}");

    // Both paths record a poll of a visible live task at its instant (even
    // one answered -32021: the task was read) and neither records a refused
    // one (unknown, another principal's) or a finished task's (nothing left
    // to orphan); an answered live task is always recorded.
    if fast_polled == Some(fast_time) {
        assert_eq!(slow_polled, Some(clock.now()), "rmcp recorded the poll of {id} as the fast path did");
    } else {
        let status = reply(&fast)["result"]["status"].clone();
        let finished = ["completed", "failed", "cancelled"].iter().any(|s| status == *s);
        assert!(reply(&fast).get("result").is_none() || finished, "the fast path recorded the answered poll of {id}");
        assert_eq!((fast_polled, slow_polled), (polled_before, polled_before), "neither path recorded {id}");
    }
    fast
}

fn reply(answer: &Answer) -> Value {
    serde_json::from_str(&answer.body).unwrap()
}

/// Polls through rmcp until `done` holds (the task's own progress, not a sweep).
async fn wait_for(url: &str, id: &str, caller: Caller<'_>, done: impl Fn(&Value) -> bool) {
    for _ in 0..500 {
        if done(&reply(&poll(url, id, caller).await)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached the expected state");
}

fn status_is(status: &'static str) -> impl Fn(&Value) -> bool {
    move |r: &Value| r["result"]["status"] == status
}

#[tokio::test]
async fn the_fast_path_answers_as_rmcp_does() {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
    let tokens = TokenMap::new([("tok-alice".to_owned(), "alice".to_owned()), ("tok-bob".to_owned(), "bob".to_owned())]);
    let per_second = std::num::NonZeroU32::new(10_000);
    // No poll slack: every poll is recorded, so both paths' records are compared.
    let mut policy = mcp_tasks_core::Policy::default();
    policy.retention.poll_slack_share = 0.0;
    let h = start_with(|b| b.clock(clock.clone()).policy(policy).auth(tokens).max_polls_per_second(per_second)).await;
    let (slow_url, stop) = serve_without_fast_path(&h.server).await;
    let alice = client_with_token(&h.url, "tok-alice").await;
    let alice_tok = Caller { token: Some("tok-alice"), traceparent: None, elicitation: true };

    let working = create(&alice, "slow_compute", json!({"seconds": 600})).await.task.task_id;
    let completed = create(&alice, "slow_compute", json!({"ms": 0, "label": "done"})).await.task.task_id;
    let failed = create(&alice, "protocol_error_job", json!({})).await.task.task_id;
    let asking = create(&alice, "multi_input", json!({})).await.task.task_id;
    wait_for(&slow_url, &completed, alice_tok, status_is("completed")).await;
    wait_for(&slow_url, &failed, alice_tok, status_is("failed")).await;
    wait_for(&slow_url, &asking, alice_tok, status_is("input_required")).await;

    let a = compare(&h, &slow_url, &clock, &working, alice_tok).await;
    assert_eq!(reply(&a)["result"]["status"], "working", "{a:?}");
    assert!(a.rate_limit_policy.is_some(), "the poll limit is advertised: {a:?}");
    let a = compare(&h, &slow_url, &clock, &completed, alice_tok).await;
    assert!(reply(&a)["result"]["result"]["content"].is_array(), "{a:?}");
    let a = compare(&h, &slow_url, &clock, &failed, alice_tok).await;
    assert!(reply(&a)["result"]["error"]["code"].is_i64(), "{a:?}");
    let a = compare(&h, &slow_url, &clock, &asking, alice_tok).await;
    assert!(reply(&a)["result"]["inputRequests"].as_object().is_some_and(|q| !q.is_empty()), "{a:?}");
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    compare(&h, &slow_url, &clock, &working, Caller { traceparent: Some(traceparent), ..alice_tok }).await;
    // A client that cannot answer the question: -32021 (HTTP 400) from both.
    let unable = compare(&h, &slow_url, &clock, &asking, Caller { elicitation: false, ..alice_tok }).await;
    assert_eq!((unable.status, reply(&unable)["error"]["code"].clone()), (400, json!(-32021)), "{unable:?}");

    // Errors: an unknown id, and another principal's task, answer alike.
    let unknown = compare(&h, &slow_url, &clock, "00000000-0000-4000-8000-000000000000", alice_tok).await;
    assert_eq!(reply(&unknown)["error"]["code"], -32602, "{unknown:?}");
    let theirs = compare(&h, &slow_url, &clock, &working, Caller { token: Some("tok-bob"), ..alice_tok }).await;
    assert_eq!(reply(&theirs)["error"]["code"], -32602, "{theirs:?}");

    // A request the fast path does not reproduce goes to rmcp (an extra header).
    let before = h.server.fast_get_answers();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
        "params": {"taskId": working, "_meta": request_meta(true)}});
    let (status, _) = post_raw(
        &h.url,
        body.to_string(),
        &[("Mcp-Method", "tasks/get"), ("Mcp-Name", &working), ("Authorization", "Bearer tok-alice"), ("X-Extra", "1")],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(h.server.fast_get_answers(), before, "an unusual header falls through to rmcp");

    // Bodies whose every difference from a plain poll lies in what the fast
    // path's parse only skips or refuses: both servers answer them alike, and
    // only the escaped but plain one takes the fast path.
    let meta = |caps: &str, info: &str| {
        format!(
            r#"{{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {caps}, "io.modelcontextprotocol/clientInfo": {info}}}"#
        )
    };
    let caps = r#"{"extensions": {"io.modelcontextprotocol/tasks": {}}}"#;
    let info = r#"{"name": "raw", "version": "0"}"#;
    let poll_body = |jsonrpc: &str, id: &str, params: String| {
        format!(r#"{{"jsonrpc": {jsonrpc}, "id": {id}, "method": "tasks/get", "params": {params}}}"#)
    };
    let params = |task_id: &str, meta: String| format!(r#"{{"taskId": "{task_id}", "_meta": {meta}}}"#);
    let escaped = format!("\\u{:04x}{}", working.as_bytes()[0], &working[1..]);
    let cases = [
        ("escaped taskId", poll_body(r#""2.0""#, "3", params(&escaped, meta(caps, info))), true),
        (
            "number beyond f64 in clientInfo",
            poll_body(r#""2.0""#, "3", params(&working, meta(caps, r#"{"v": 1e400}"#))),
            false,
        ),
        (
            "number beyond f64 in an unknown capability",
            poll_body(
                r#""2.0""#,
                "3",
                params(&working, meta(r#"{"x": 1e400, "extensions": {"io.modelcontextprotocol/tasks": {}}}"#, info)),
            ),
            false,
        ),
        (
            "lone surrogate in clientInfo",
            poll_body(r#""2.0""#, "3", params(&working, meta(caps, r#"{"name": "\ud800"}"#))),
            false,
        ),
        ("fractional id", poll_body(r#""2.0""#, "1.0", params(&working, meta(caps, info))), false),
        ("id beyond 64 bits", poll_body(r#""2.0""#, "9223372036854775808", params(&working, meta(caps, info))), false),
        ("escaped jsonrpc", poll_body(r#""2\u002e0""#, "3", params(&working, meta(caps, info))), false),
        (
            "repeated taskId",
            poll_body(
                r#""2.0""#,
                "3",
                format!(r#"{{"taskId": "{working}", "taskId": "{working}", "_meta": {}}}"#, meta(caps, info)),
            ),
            false,
        ),
        ("params as an array", poll_body(r#""2.0""#, "3", format!(r#"[{}, "{working}"]"#, meta(caps, info))), false),
        (
            "_meta as an array",
            poll_body(r#""2.0""#, "3", format!(r#"{{"taskId": "{working}", "_meta": ["2026-07-28", {caps}]}}"#)),
            false,
        ),
        ("an array of the members", format!(r#"["2.0", 3, "tasks/get", {}]"#, params(&working, meta(caps, info))), false),
    ];
    let headers = [("Mcp-Method", "tasks/get"), ("Mcp-Name", working.as_str()), ("Authorization", "Bearer tok-alice")];
    for (case, body, fast_path) in cases {
        let before = h.server.fast_get_answers();
        let fast = post_raw(&h.url, body.clone(), &headers).await;
        assert_eq!(h.server.fast_get_answers(), before + u64::from(fast_path), "{case}: took the fast path: {fast:?}");
        let slow = post_raw(&slow_url, body, &headers).await;
        assert_eq!(fast, slow, "{case}: the two servers answer differently");
    }

    let _ = stop.send(());
    h.stop().await;
}
