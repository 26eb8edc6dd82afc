//! A transient failure is retried by the server: the client sees `working`
//! with a status message about the retry, then `completed`.

use crate::common;
use common::*;
use rmcp::model::{TaskPayload, TaskStatus};
use serde_json::json;

#[tokio::test]
async fn a_transient_failure_is_retried_and_visible_as_working() {
    let h = start().await;
    let c = client(&h.url).await;
    // Each attempt takes 300 ms, so the retry's status message is observable.
    let id = create(&c, "flaky_upstream", json!({"failures": 1, "ms": 300})).await.task.task_id;

    let retrying = poll_until(&c, &id, |g| {
        g.task.status().is_terminal() || g.task.task.status_message.as_deref().is_some_and(|m| m.contains("retry"))
    })
    .await;
    assert_eq!(retrying.task.status(), TaskStatus::Working, "{retrying:?}");

    let done = poll_to_end(&c, &id).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{done:?}") };
    assert_eq!(result["content"][0]["text"], "upstream answered on attempt 2 of 3");
    h.stop().await;
}
