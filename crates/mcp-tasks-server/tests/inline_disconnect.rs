//! A client that cannot take a task gets a task-optional tool's result
//! inline; if it goes away before the result, the task behind the call is
//! cancelled rather than left running for nobody.

mod common;

use std::time::Duration;

use common::*;
use mcp_tasks_core::TaskStatus;
use mcp_tasks_store::ListQuery;
use serde_json::json;

#[tokio::test]
async fn a_vanished_inline_caller_cancels_its_task() {
    let h = start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "slow_compute", "arguments": {"seconds": 60}, "_meta": request_meta(false)}});
    let gone = reqwest::Client::new()
        .post(&h.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "slow_compute")
        .timeout(Duration::from_millis(300))
        .body(body.to_string())
        .send()
        .await;
    assert!(gone.is_err(), "the call should still be running when the client gives up");

    let store = h.server.runtime().store().clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let tasks = store.list(ListQuery { limit: 10, ..ListQuery::default() }).await.unwrap();
        assert_eq!(tasks.len(), 1, "{tasks:?}");
        if tasks[0].status == TaskStatus::Cancelled {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still {:?}", tasks[0].status);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    still_serves(&h.url).await;
    h.stop().await;
}
