//! Connections are bounded: a socket that sends nothing, stops mid-headers,
//! stops mid-body, or sits idle after a response is closed by the server
//! within a bounded time; and with a connection limit of N, the N+1th
//! connection waits (it is not served while N idle sockets hold the slots)
//! and is served once the timeouts have closed them.

use crate::common;
use std::time::Duration;

use common::raw_tcp::*;
use common::*;
use mcp_tasks_server::ConnectionLimits;
use serde_json::json;
use tokio::time::Instant;

fn short(max_connections: usize) -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: Duration::from_millis(400),
        body_timeout: Duration::from_millis(400),
        idle_timeout: Duration::from_millis(400),
        max_connections,
        ..ConnectionLimits::default()
    }
}

fn tools_list() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": request_meta(false)}}).to_string()
}

#[tokio::test]
async fn a_socket_that_sends_nothing_is_closed() {
    let h = start_with(|b| b.connection_limits(short(64))).await;
    let mut silent = connect(&h.url).await;
    let (received, _) = read_until_closed(&mut silent).await;
    assert_eq!(received, "", "nothing was asked, nothing is answered");
    still_serves(&h.url).await;
    h.stop().await;
}

#[tokio::test]
async fn a_socket_that_stops_mid_headers_is_closed() {
    let h = start_with(|b| b.connection_limits(short(64))).await;
    let mut stalled = connect(&h.url).await;
    send(&mut stalled, &format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: appl", addr(&h.url))).await;
    read_until_closed(&mut stalled).await;
    still_serves(&h.url).await;
    h.stop().await;
}

#[tokio::test]
async fn a_socket_that_stops_mid_body_gets_408_and_is_closed() {
    let h = start_with(|b| b.connection_limits(short(64))).await;
    let mut stalled = connect(&h.url).await;
    let request = post_request(&h.url, &tools_list(), &[("Mcp-Method", "tools/list")]);
    // Everything but the last ten bytes of the body.
    send(&mut stalled, &request[..request.len() - 10]).await;
    let (received, _) = read_until_closed(&mut stalled).await;
    assert!(received.starts_with("HTTP/1.1 408"), "{received}");
    assert!(received.contains("did not arrive within"), "{received}");
    still_serves(&h.url).await;
    h.stop().await;
}

#[tokio::test]
async fn a_keep_alive_connection_idle_after_its_response_is_closed() {
    let h = start_with(|b| b.connection_limits(short(64))).await;
    let mut idle = connect(&h.url).await;
    send(&mut idle, &post_request(&h.url, &tools_list(), &[("Mcp-Method", "tools/list")])).await;
    let (received, _) = read_until_closed(&mut idle).await;
    assert!(received.starts_with("HTTP/1.1 200"), "{received}");
    assert!(received.contains("\"tools\""), "the whole response came before the close: {received}");
    h.stop().await;
}

#[tokio::test]
async fn the_connection_beyond_the_limit_waits_and_is_served_once_idle_ones_close() {
    const LIMIT: usize = 4;
    let header_timeout = Duration::from_millis(1500);
    let limits = ConnectionLimits { header_timeout, ..short(LIMIT) };
    let h = start_with(|b| b.connection_limits(limits)).await;
    let opened = Instant::now();
    let mut silent = Vec::new();
    for _ in 0..LIMIT {
        silent.push(connect(&h.url).await);
    }
    let mut next = connect(&h.url).await;
    send(&mut next, &post_request(&h.url, &tools_list(), &[("Mcp-Method", "tools/list"), ("Connection", "close")])).await;
    let (received, answered) = read_until_closed(&mut next).await;
    assert!(received.starts_with("HTTP/1.1 200"), "{received}");
    // It could only be served once a silent socket's header timeout freed a slot.
    assert!(
        answered.duration_since(opened) >= header_timeout - Duration::from_millis(100),
        "served after {:?}, before any slot was free: the limit did not hold",
        answered.duration_since(opened)
    );
    for mut socket in silent {
        read_until_closed(&mut socket).await;
    }
    still_serves(&h.url).await;
    h.stop().await;
}
