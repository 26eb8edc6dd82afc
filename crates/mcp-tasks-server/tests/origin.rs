//! A browser `Origin` is checked: a foreign one gets 403, a loopback one (the
//! default when nothing is configured) and a request without `Origin` (not a
//! browser) are served, and configured origins replace the default.

use crate::common;
use common::*;
use serde_json::json;

fn tools_list() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": request_meta(false)}}).to_string()
}

async fn status_with_origin(url: &str, origin: Option<&str>) -> u16 {
    let mut headers = vec![("Mcp-Method", "tools/list")];
    if let Some(origin) = origin {
        headers.push(("Origin", origin));
    }
    post_raw(url, tools_list(), &headers).await.0
}

#[tokio::test]
async fn a_foreign_origin_is_forbidden_and_loopback_ones_are_served() {
    let h = start().await;
    assert_eq!(status_with_origin(&h.url, Some("http://evil.example")).await, 403);
    assert_eq!(status_with_origin(&h.url, Some("https://evil.example:8443")).await, 403);
    assert_eq!(status_with_origin(&h.url, Some("null")).await, 403);
    assert_eq!(status_with_origin(&h.url, Some("http://localhost:5173")).await, 200);
    assert_eq!(status_with_origin(&h.url, Some("http://127.0.0.1:3000")).await, 200);
    assert_eq!(status_with_origin(&h.url, None).await, 200);
    h.stop().await;
}

#[tokio::test]
async fn configured_origins_replace_the_default() {
    let h = start_with(|b| b.allowed_origins(["https://app.example:*"])).await;
    assert_eq!(status_with_origin(&h.url, Some("https://app.example")).await, 200);
    assert_eq!(status_with_origin(&h.url, Some("http://localhost:5173")).await, 403);
    assert_eq!(status_with_origin(&h.url, Some("http://evil.example")).await, 403);
    assert_eq!(status_with_origin(&h.url, None).await, 200);
    h.stop().await;
}
