//! An unknown task id gets -32602 naming the id in plain words, for get,
//! update and cancel.

use crate::common;
use std::collections::BTreeMap;

use common::*;
use rmcp::model::{CancelTaskParams, ErrorCode, UpdateTaskParams};

#[tokio::test]
async fn unknown_ids_are_invalid_params_naming_the_id() {
    let h = start().await;
    let c = client(&h.url).await;
    let id = "00000000-0000-4000-8000-000000000000";

    let e = get(&c, id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains(id), "{}", e.message);
    // Plain words, not Rust's debug formatting of the id's type.
    assert!(!e.message.contains("TaskId("), "{}", e.message);

    let e = c.peer().cancel_task(CancelTaskParams::new(id)).await.map_err(mcp_error).unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    let e = c.peer().update_task(UpdateTaskParams::new(id, BTreeMap::new())).await.map_err(mcp_error).unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    h.stop().await;
}
