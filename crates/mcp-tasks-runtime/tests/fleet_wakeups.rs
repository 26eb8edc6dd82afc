//! Cross-instance wake-ups on PostgreSQL: instance B only serves requests,
//! instance A runs the tools. A's executor looks for work on its own only
//! once an hour and renews leases every 20 minutes, so within this test only
//! the store's events (LISTEN/NOTIFY) can bring it B's new task and B's
//! cancel; B's answer reaches A's waiting handler too.

use crate::support;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Policy, TaskStatus};
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_runtime::{CreateTask, ToolFailure};
use mcp_tasks_store::TaskStore;
use serde_json::json;
use support::*;
use tokio::sync::mpsc;

/// Bounded wait for something a handler on another task reports.
async fn recv<T>(rx: &mut mpsc::UnboundedReceiver<T>, what: &str) -> T {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .unwrap_or_else(|_| panic!("{what} did not happen within 20 s"))
        .expect("channel open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_answers_and_cancels_through_b_reach_a_at_once() {
    let Some(db) = TestDatabase::create().await else { return };
    let clock = clock();
    let policy = Policy { lease_duration: Duration::from_secs(3600), ..Policy::default() };
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (answered_tx, mut answered) = mpsc::unbounded_channel();
    let (stopped_tx, mut stopped) = mpsc::unbounded_channel();
    let asking = FnTool::new("ask", move |ctx| {
        let (started_tx, answered_tx) = (started_tx.clone(), answered_tx.clone());
        async move {
            let _ = started_tx.send(ctx.task_id().clone());
            let answers = ctx
                .request_input(BTreeMap::from([("q".to_owned(), json!({"message": "go on?"}))]))
                .await
                .map_err(|e| ToolFailure::permanent(e.to_string()))?;
            let _ = answered_tx.send(answers.clone());
            Ok(json!({ "answers": answers }))
        }
    });
    let waiting = FnTool::new("wait", move |ctx| {
        let stopped_tx = stopped_tx.clone();
        async move {
            let outcome = ctx.sleep(Duration::from_secs(3600)).await;
            let _ = stopped_tx.send(outcome.is_err());
            Ok(json!({}))
        }
    });
    let store = |url: String| async move { Arc::new(PostgresStore::open(&url).await.expect("open")) as Arc<dyn TaskStore> };
    let a = builder(store(db.url()).await, &clock)
        .policy(policy.clone())
        .claim_interval(Duration::from_secs(3600))
        .tool(asking.clone())
        .tool(waiting.clone())
        .build()
        .unwrap();
    let b = builder(store(db.url()).await, &clock).policy(policy).tool(asking).tool(waiting).build().unwrap();
    a.start().await.unwrap();

    for round in 0..2 {
        // The first round may race A's first look for work; the second cannot.
        let id = b.create_task(CreateTask::new("ask", json!({}))).await.unwrap().record.id;
        assert_eq!(recv(&mut started, "A starting B's task").await, id, "round {round}");
        eventually("the question is stored", || async { status(&b, &id).await == TaskStatus::InputRequired }).await;
        b.answer_input(&id, None, BTreeMap::from([("q".to_owned(), json!({"action": "accept"}))])).await.unwrap();
        assert_eq!(recv(&mut answered, "B's answer reaching A's handler").await["q"], json!({"action": "accept"}));
        eventually("the task completes", || async { status(&b, &id).await == TaskStatus::Completed }).await;
    }

    let id = b.create_task(CreateTask::new("wait", json!({}))).await.unwrap().record.id;
    eventually("A runs it", || async { a.running() == 1 }).await;
    let view = b.cancel_task(&id, None).await.unwrap();
    assert!(view.record.cancel_requested, "B only flags a task A runs");
    assert!(recv(&mut stopped, "B's cancel reaching A's handler").await, "the handler saw its token cancelled");
    eventually("the task ends cancelled", || async { status(&b, &id).await == TaskStatus::Cancelled }).await;
    a.shutdown(Duration::from_secs(5)).await;
}
