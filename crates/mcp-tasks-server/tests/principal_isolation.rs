//! Tasks are bound to the principal of the bearer token that created them:
//! another principal gets exactly what an unknown id gets, and a request
//! without a known token is refused with 401.

use crate::common;
use common::*;
use mcp_tasks_server::TokenMap;
use rmcp::model::{CancelTaskParams, ErrorCode, TaskStatus};
use serde_json::json;

#[tokio::test]
async fn another_principal_cannot_see_or_touch_a_task() {
    let tokens = TokenMap::new([("tok-alice".to_owned(), "alice".to_owned()), ("tok-bob".to_owned(), "bob".to_owned())]);
    let h = start_with(|b| b.auth(tokens)).await;
    let alice = client_with_token(&h.url, "tok-alice").await;
    let bob = client_with_token(&h.url, "tok-bob").await;

    let id = create(&alice, "slow_compute", json!({"seconds": 60})).await.task.task_id;
    let record = h.server.runtime().store().get(&mcp_tasks_core::TaskId(id.clone())).await.unwrap().unwrap();
    assert_eq!(record.principal.as_deref(), Some("alice"));

    let theirs = get(&bob, &id).await.unwrap_err();
    let unknown_id = "00000000-0000-4000-8000-000000000000";
    let unknown = get(&bob, unknown_id).await.unwrap_err();
    assert_eq!(theirs.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(theirs.message.replace(&id, "ID"), unknown.message.replace(unknown_id, "ID"));

    let e = bob.peer().cancel_task(CancelTaskParams::new(id.clone())).await.map_err(mcp_error).unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(get(&alice, &id).await.unwrap().task.status(), TaskStatus::Working);

    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": request_meta(false)}});
    let (status, reply) = post_raw(&h.url, body.to_string(), &[("Mcp-Method", "tools/list")]).await;
    assert_eq!(status, 401, "{reply}");
    let (status, _) =
        post_raw(&h.url, body.to_string(), &[("Mcp-Method", "tools/list"), ("Authorization", "Bearer tok-eve")]).await;
    assert_eq!(status, 401);

    alice.peer().cancel_task(CancelTaskParams::new(id.clone())).await.unwrap();
    h.stop().await;
}
