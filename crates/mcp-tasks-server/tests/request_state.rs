//! A `requestState` the server issues is sealed: echoed back unchanged it
//! is accepted, changed it is refused, and past its time to live it is
//! refused — each with `-32602` naming why, the server serving on. The
//! clock is injected: expiry is reached by stepping it, not by waiting.

use std::sync::Arc;
use std::time::Duration;

use crate::common;
use common::*;
use mcp_tasks_core::{ManualClock, Timestamp};
use mcp_tasks_server::request_state::DEFAULT_REQUEST_STATE_TTL;
use serde_json::{Value, json};

const TOOL: &str = "test_input_required_result_request_state";

/// One raw `tools/call` of [`TOOL`], with answers and a state if given.
async fn round(url: &str, state: Option<&str>) -> (u16, Value) {
    let mut params = json!({"name": TOOL, "arguments": {}, "_meta": request_meta(false)});
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    if let Some(state) = state {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    post_raw(url, body.to_string(), &[("Mcp-Method", "tools/call"), ("Mcp-Name", TOOL)]).await
}

/// The sealed state of a first round.
async fn issued(url: &str) -> String {
    let (status, reply) = round(url, None).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
    reply["result"]["requestState"].as_str().expect("a requestState").to_owned()
}

#[tokio::test]
async fn an_unchanged_state_is_accepted_and_a_changed_one_refused() {
    let h = start_with(|b| b.request_state_key(vec![9u8; 32])).await;
    let state = issued(&h.url).await;

    let (_, reply) = round(&h.url, Some(&state)).await;
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("state-ok"), "{reply}");

    // The suite's change (a suffix), one changed character, and a state from elsewhere.
    let mut flipped = state.clone().into_bytes();
    flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
    for bad in [format!("{state}-TAMPERED"), String::from_utf8(flipped).unwrap(), "not-a-state".to_owned()] {
        let (status, reply) = round(&h.url, Some(&bad)).await;
        assert_eq!(status, 200, "{reply}");
        assert_eq!(reply["error"]["code"], -32602, "{bad}: {reply}");
        assert!(reply["error"]["message"].as_str().unwrap().contains("integrity"), "{reply}");
        assert_eq!(reply["error"]["data"]["requestState"], "tampered", "{reply}");
    }
    still_serves(&h.url).await;
    h.stop().await;
}

#[tokio::test]
async fn a_state_from_a_server_with_another_key_is_refused() {
    let a = start_with(|b| b.request_state_key(vec![1u8; 32])).await;
    let b = start_with(|b| b.request_state_key(vec![2u8; 32])).await;
    let shared = start_with(|b| b.request_state_key(vec![1u8; 32])).await;
    let state = issued(&a.url).await;
    let (_, reply) = round(&b.url, Some(&state)).await;
    assert_eq!(reply["error"]["data"]["requestState"], "tampered", "{reply}");
    // A fleet shares its key: another instance with the same key accepts it.
    let (_, reply) = round(&shared.url, Some(&state)).await;
    assert!(reply["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("state-ok"), "{reply}");
    for h in [a, b, shared] {
        h.stop().await;
    }
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
    let server_clock = clock.clone();
    let h = start_with(move |b| b.clock(server_clock)).await;
    let state = issued(&h.url).await;

    clock.advance(DEFAULT_REQUEST_STATE_TTL);
    let (_, reply) = round(&h.url, Some(&state)).await;
    assert!(reply["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("state-ok"), "{reply}");

    clock.advance(Duration::from_millis(1));
    let (status, reply) = round(&h.url, Some(&state)).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("expired"), "{reply}");
    assert_eq!(reply["error"]["data"]["requestState"], "expired", "{reply}");
    still_serves(&h.url).await;
    h.stop().await;
}

#[tokio::test]
async fn a_short_key_is_refused_at_build() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open(dir.path().join("t.db")).unwrap());
    let e = mcp_tasks_server::TaskServer::builder(store).request_state_key(vec![0u8; 16]).build().unwrap_err();
    assert!(e.to_string().contains("at least 32 bytes"), "{e}");
}
