//! Three transient failures make a task poison: failed and dead-lettered in
//! one write. Requeueing gives a fresh task with a fresh attempt budget.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::ToolFailure;
use mcp_tasks_store::{DeadLetterQuery, PurgeQuery};
use serde_json::json;
use support::*;

#[tokio::test]
async fn poison_is_failed_dead_lettered_and_requeued_with_a_fresh_budget() {
    let clock = clock();
    let tool = failing("doomed", ToolFailure::new("connection reset by peer"));
    let rt = builder(memory(), &clock).tool(tool.clone()).build().unwrap();
    let id = rt.create_task(mcp_tasks_runtime::CreateTask::new("doomed", json!({"n": 1}))).await.unwrap().record.id;

    for attempt in 1..=3 {
        clock.advance(Duration::from_secs(60)); // past any backoff
        assert_eq!(run_settled(&rt).await, 1, "attempt {attempt} runs");
    }
    let failed = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.attempt, 3);
    let error = failed.error.unwrap();
    assert_eq!(error.code, -32603);
    assert_eq!(error.message, "connection reset by peer");
    assert_eq!(error.data.as_ref().unwrap()["class"], "poison");
    clock.advance(Duration::from_secs(60));
    assert_eq!(rt.run_due_once().await.unwrap(), 0, "never runs a fourth time");
    assert_eq!(tool.runs(), 3);

    let letters = rt.dead_letters().list(DeadLetterQuery::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    let letter = rt.dead_letters().show(&id).await.unwrap();
    assert_eq!((letter.tool.as_str(), letter.attempts), ("doomed", 3));
    assert!(letter.reason.contains("poison"), "{}", letter.reason);
    assert_eq!(letter.arguments, json!({"n": 1}));

    let fresh = rt.dead_letters().requeue(&id).await.unwrap().record;
    assert_ne!(fresh.id, id);
    assert_eq!((fresh.status, fresh.attempt, fresh.max_attempts), (TaskStatus::Working, 1, 3));
    assert_eq!(fresh.arguments, json!({"n": 1}));
    assert_eq!(rt.dead_letters().show(&id).await.unwrap().requeued_as, Some(fresh.id.clone()));
    let again = rt.dead_letters().requeue(&id).await.unwrap_err();
    assert!(again.to_string().contains("already requeued"), "{again}");

    assert_eq!(run_settled(&rt).await, 1, "the requeued task runs");
    assert_eq!(rt.get_task(&fresh.id, None).await.unwrap().record.attempt, 2, "fresh budget: retried again");

    let purged =
        rt.dead_letters().purge(PurgeQuery { task_ids: Some(vec![id.clone()]), ..Default::default() }).await.unwrap();
    assert_eq!(purged, 1);
    assert!(rt.dead_letters().show(&id).await.is_err());
}
