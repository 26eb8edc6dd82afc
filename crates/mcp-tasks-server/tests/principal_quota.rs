//! A per-principal quota over real HTTP: a principal at its limit gets a
//! JSON-RPC error saying its limit was reached and what frees it, another
//! principal is unaffected, and the server keeps serving.

use crate::common;
use common::*;
use mcp_tasks_server::{QUOTA_EXCEEDED, TokenMap};
use mcp_tasks_store::Quota;
use serde_json::json;

#[tokio::test]
async fn a_principal_at_its_limit_is_refused_with_a_clear_error() {
    let tokens = TokenMap::new([("tok-alice".to_owned(), "alice".to_owned()), ("tok-bob".to_owned(), "bob".to_owned())]);
    let quota = Quota { max_tasks: Some(2), max_argument_bytes: None };
    let h = start_with(|b| b.auth(tokens).runtime(|r| r.quota(quota))).await;
    let alice = client_with_token(&h.url, "tok-alice").await;
    let bob = client_with_token(&h.url, "tok-bob").await;

    create(&alice, "slow_compute", json!({"seconds": 60})).await;
    create(&alice, "slow_compute", json!({"seconds": 60})).await;
    let refused = call(&alice, "slow_compute", json!({"seconds": 60})).await.unwrap_err();
    assert_eq!(refused.code, QUOTA_EXCEEDED);
    assert_eq!(refused.code.0, -32050);
    let message = refused.message.to_string();
    assert!(
        message.contains("\"alice\"") && message.contains("limit of 2 stored tasks") && message.contains("expire"),
        "{message}"
    );
    assert_eq!(refused.data, Some(json!({"principal": "alice", "resource": "tasks", "used": 2, "limit": 2})));

    create(&bob, "slow_compute", json!({"seconds": 60})).await;
    still_serves_with(&h.url).await;
    h.stop().await;
}

/// `tools/list` with a token still answers.
async fn still_serves_with(url: &str) {
    let body = json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {"_meta": request_meta(false)}});
    let (status, reply) =
        post_raw(url, body.to_string(), &[("Mcp-Method", "tools/list"), ("Authorization", "Bearer tok-bob")]).await;
    assert_eq!(status, 200, "{reply}");
}
