//! `tasks/cancel` is acknowledged at once, the task settles `cancelled`, and
//! cancelling it again (now terminal) gets the same empty acknowledgement.

use crate::common;
use common::*;
use rmcp::model::{CancelTaskParams, TaskStatus};
use serde_json::json;

#[tokio::test]
async fn a_running_task_is_cancelled_and_a_second_cancel_is_still_acknowledged() {
    let h = start().await;
    let c = client(&h.url).await;
    let id = create(&c, "slow_compute", json!({"seconds": 60})).await.task.task_id;

    c.peer().cancel_task(CancelTaskParams::new(id.clone())).await.unwrap();
    let end = poll_to_end(&c, &id).await;
    assert_eq!(end.task.status(), TaskStatus::Cancelled);

    c.peer().cancel_task(CancelTaskParams::new(id.clone())).await.unwrap();
    assert_eq!(get(&c, &id).await.unwrap().task.status(), TaskStatus::Cancelled);
    h.stop().await;
}
