//! The reaper runs timeouts before orphans: a task both past its deadline
//! and unpolled ends failed (timeout), not cancelled.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_task_past_deadline_and_unpolled_times_out() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let id = create(&rt, "t").await;
    // Past both the 900 s orphan window and the 1800 s deadline.
    clock.advance(Duration::from_secs(1800));
    let report = rt.reap_once().await.unwrap();
    assert_eq!((report.timed_out, report.orphaned, report.expired), (1, 0, 0));
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.data.unwrap()["reason"], "timeout");
    assert!(e.message.contains("timed out"), "{}", e.message);
    // A second pass finds nothing.
    assert_eq!(rt.reap_once().await.unwrap(), Default::default());
}
