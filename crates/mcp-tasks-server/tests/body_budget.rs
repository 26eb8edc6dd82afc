//! Bodies in flight are bounded in bytes: while one large body is arriving
//! and holds most of a small budget, a second large body is refused at once
//! (503, `Retry-After`, a JSON-RPC error naming the budget), a small request
//! is still answered, and once the first body is gone the second is admitted.

use crate::common;
use std::time::Duration;

use common::raw_tcp::*;
use common::*;
use mcp_tasks_server::ConnectionLimits;
use serde_json::json;
use tokio::io::AsyncReadExt;

const BUDGET: usize = 256 * 1024;

fn large_call(id: u64) -> String {
    let filler = "x".repeat(200 * 1024);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "greet", "arguments": {"name": format!("budget {filler}")}, "_meta": request_meta(false)}})
    .to_string()
}

#[tokio::test]
async fn large_bodies_beyond_the_budget_are_refused_while_small_requests_are_served() {
    let limits = ConnectionLimits {
        max_body_bytes_in_flight: BUDGET,
        body_timeout: Duration::from_secs(60),
        ..ConnectionLimits::default()
    };
    let h = start_with(|b| b.max_body_bytes(BUDGET).connection_limits(limits)).await;
    let headers = [("Mcp-Method", "tools/call"), ("Mcp-Name", "greet")];

    // A large body that has started to arrive and holds 200 KiB of the budget.
    let first = post_request(&h.url, &large_call(1), &headers);
    let mut arriving = connect(&h.url).await;
    send(&mut arriving, &first[..first.len() - 100 * 1024]).await;

    // A second one does not fit. Retry until the first is seen to hold its share
    // (its headers may still be on their way through the server).
    let deadline = tokio::time::Instant::now() + BOUND;
    let (status, reply) = loop {
        let (status, reply) = post_raw(&h.url, large_call(2), &headers).await;
        if status == 503 || tokio::time::Instant::now() > deadline {
            break (status, reply);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status, 503, "{reply}");
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains(&BUDGET.to_string()), "{reply}");

    // Small requests are not held back by the large ones.
    still_serves(&h.url).await;

    // The first body's client gives up: its share returns and the second fits.
    drop(arriving);
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let (status, reply) = post_raw(&h.url, large_call(3), &headers).await;
        if status == 200 {
            assert!(reply["result"]["content"][0]["text"].as_str().unwrap().contains("budget"), "{reply}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never admitted again: {status} {reply}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.stop().await;
}

#[tokio::test]
async fn the_refusal_carries_retry_after() {
    let limits = ConnectionLimits { max_body_bytes_in_flight: BUDGET, ..ConnectionLimits::default() };
    let h = start_with(|b| b.max_body_bytes(BUDGET).connection_limits(limits)).await;
    let headers = [("Mcp-Method", "tools/call"), ("Mcp-Name", "greet")];
    let first = post_request(&h.url, &large_call(1), &headers);
    let mut arriving = connect(&h.url).await;
    send(&mut arriving, &first[..first.len() - 100 * 1024]).await;
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let mut second = connect(&h.url).await;
        send(&mut second, &post_request(&h.url, &large_call(2), &[("Connection", "close"), headers[0], headers[1]])).await;
        let mut reply = String::new();
        let _ = tokio::time::timeout(BOUND, second.read_to_string(&mut reply)).await;
        if reply.starts_with("HTTP/1.1 503") {
            assert!(reply.to_ascii_lowercase().contains("retry-after: 1"), "{reply}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never refused: {reply}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(arriving);
    h.stop().await;
}
