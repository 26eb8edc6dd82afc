//! `tasks/get` beyond a principal's rate (`max_polls_per_second`) gets HTTP
//! 429 with `Retry-After` and `-32051` naming the limit; other principals
//! are not affected; once the clock moves on (a manual clock: no sleeping),
//! polls are answered again. Every answered poll advertises the limit.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{ManualClock, Timestamp};
use mcp_tasks_server::{POLL_RATE_LIMITED, TokenMap};
use serde_json::{Value, json};

use crate::common::*;

/// A raw `tasks/get` of `id` as the holder of `token`: status, `Retry-After`, `RateLimit-Policy`, body.
async fn poll(url: &str, token: &str, id: &str) -> (u16, Option<String>, Option<String>, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/get",
                      "params": {"taskId": id, "_meta": request_meta(true)}});
    let response = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tasks/get")
        .header("Authorization", format!("Bearer {token}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (retry_after, policy) = (header("retry-after"), header("ratelimit-policy"));
    let status = response.status().as_u16();
    (status, retry_after, policy, response.json().await.unwrap())
}

#[tokio::test]
async fn polls_beyond_the_rate_get_429_and_recover_when_the_clock_moves_on() {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
    let tokens = TokenMap::new([("t-alice".to_owned(), "alice".to_owned()), ("t-bob".to_owned(), "bob".to_owned())]);
    let h = start_with(|b| b.clock(clock.clone()).auth(tokens).max_polls_per_second(NonZeroU32::new(2))).await;
    let alice = client_with_token(&h.url, "t-alice").await;
    let bob = client_with_token(&h.url, "t-bob").await;
    let alices = create(&alice, "long_running_report", json!({"ms": 0})).await.task.task_id;
    let bobs = create(&bob, "long_running_report", json!({"ms": 0})).await.task.task_id;

    // A burst of one second's worth is allowed.
    for _ in 0..2 {
        let (status, _, policy, body) = poll(&h.url, "t-alice", &alices).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(policy.as_deref(), Some("\"tasks-get\";q=2;w=1"));
    }
    let (status, retry_after, policy, body) = poll(&h.url, "t-alice", &alices).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    assert_eq!(policy.as_deref(), Some("\"tasks-get\";q=2;w=1"));
    assert_eq!(body["id"], 7);
    assert_eq!(body["error"]["code"], POLL_RATE_LIMITED);
    assert_eq!(body["error"]["data"], json!({"maxPollsPerSecond": 2, "retryAfterMs": 500}));
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("2 tasks/get per second per principal"), "{message}");

    // Bob has a count of his own.
    assert_eq!(poll(&h.url, "t-bob", &bobs).await.0, 200);
    // Other methods are not counted.
    still_serves_with(&h.url, "t-alice").await;

    // Half a second later one more poll is allowed, and no more.
    clock.advance(Duration::from_millis(500));
    assert_eq!(poll(&h.url, "t-alice", &alices).await.0, 200);
    assert_eq!(poll(&h.url, "t-alice", &alices).await.0, 429);
    // rmcp's client reads the refusal as HTTP 429 with its Retry-After.
    let refused = alice.peer().get_task(rmcp::model::GetTaskParams::new(alices.clone())).await.unwrap_err();
    let refused = format!("{refused:?}");
    assert!(refused.contains("status: 429") && refused.contains("retry_after: Some(\"1\")"), "{refused}");

    let scraped = reqwest::get(h.url.replace("/mcp", "/metrics")).await.unwrap().text().await.unwrap();
    assert!(scraped.lines().any(|l| l == "mcp_tasks_polls_rate_limited_total 3"), "{scraped}");
    h.stop().await;
}

/// A `tools/list` as the holder of `token` is answered.
async fn still_serves_with(url: &str, token: &str) {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": request_meta(false)}});
    let (status, reply) =
        post_raw(url, body.to_string(), &[("Mcp-Method", "tools/list"), ("Authorization", &format!("Bearer {token}"))])
            .await;
    assert_eq!(status, 200, "{reply}");
}
