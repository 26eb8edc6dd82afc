//! A task whose executor died while it waited for input is asked again as
//! the same attempt; every claim holds its lease under a holder of its own,
//! so the stale handler of the earlier claim loses its writes even when the
//! same runtime claimed the task again.

use crate::support;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{RuntimeError, TaskContext, ToolFailure, TriageReport, TriageScope};
use mcp_tasks_store::DeadLetterQuery;
use serde_json::json;
use support::*;
use tokio::sync::mpsc;

/// Asks for confirmation; hands its context to the test first; returns which run it was.
fn asking(contexts: mpsc::UnboundedSender<TaskContext>) -> Arc<FnTool> {
    let runs = Arc::new(AtomicU32::new(0));
    FnTool::new("ask", move |ctx| {
        let (contexts, run) = (contexts.clone(), runs.fetch_add(1, Ordering::SeqCst) + 1);
        async move {
            let _ = contexts.send(ctx.clone());
            let request = json!({"method": "elicitation/create", "params": {"message": "Sure?"}});
            let answers = ctx
                .request_input(BTreeMap::from([("ok".to_owned(), request)]))
                .await
                .map_err(|e| ToolFailure::permanent(e.to_string()))?;
            Ok(json!({"run": run, "attempt": ctx.attempt(), "answer": answers["ok"]}))
        }
    })
}

async fn next(contexts: &mut mpsc::UnboundedReceiver<TaskContext>) -> TaskContext {
    tokio::time::timeout(Duration::from_secs(10), contexts.recv()).await.expect("a handler starts").expect("open")
}

#[tokio::test]
async fn a_stale_holder_of_the_same_attempt_loses_its_writes() {
    let clock = clock();
    let store = memory();
    let (tx, mut contexts) = mpsc::unbounded_channel();
    let a = builder(store.clone(), &clock).tool(asking(tx)).build().unwrap();
    let b = builder(store.clone(), &clock).tool(returning("ask", json!({}))).build().unwrap();

    let id = create(&a, "ask").await;
    assert_eq!(a.run_due_once().await.unwrap(), 1);
    let stale = next(&mut contexts).await;
    eventually("it asks", || async { status(&a, &id).await == TaskStatus::InputRequired }).await;

    // A stalls: its lease lapses while the task waits. Another instance's
    // triage re-asks it, attempt unspent, and A itself claims it again.
    clock.advance(Duration::from_secs(30));
    let report = b.triage_once(TriageScope::ExpiredLeases).await.unwrap();
    assert_eq!(report, TriageReport { reasked: 1, ..TriageReport::default() });
    let r = stored(&store, &id).await;
    assert_eq!((r.status, r.attempt, r.lease.is_none()), (TaskStatus::Working, 1, true));
    assert_eq!(a.run_due_once().await.unwrap(), 1);
    let fresh = next(&mut contexts).await;
    assert_eq!((stale.attempt(), fresh.attempt()), (1, 1), "same runtime, same attempt");
    eventually("the re-run asks again", || async { status(&a, &id).await == TaskStatus::InputRequired }).await;
    let holder = stored(&store, &id).await.lease.expect("leased").owner;
    assert!(holder.starts_with(a.executor_id()), "{holder}");

    // The stale handler's write loses; the fresh one's holds.
    let before = stored(&store, &id).await;
    let lost = stale.set_status_message("stale write").await;
    assert_eq!(lost, Err(RuntimeError::LeaseLost(id.clone())));
    assert_eq!(stored(&store, &id).await, before, "nothing changed");
    fresh.set_status_message("still asking").await.unwrap();

    a.answer_input(&id, None, BTreeMap::from([("ok".to_owned(), json!({"action": "accept"}))])).await.unwrap();
    eventually("it completes", || async { status(&a, &id).await == TaskStatus::Completed }).await;
    let done = stored(&store, &id).await;
    assert_eq!(done.result, Some(json!({"run": 2, "attempt": 1, "answer": {"action": "accept"}})));
    idle(&a).await;
    assert_eq!(stored(&store, &id).await, done, "the stale handler's end changed nothing");
}

#[tokio::test]
async fn restarts_while_waiting_spend_no_attempt() {
    let (_dir, path) = sqlite_file();
    let clock = clock();
    let mut id = None;
    // Four lives die while the task waits; even past max_attempts (3) it is
    // neither poison nor failed.
    for life in 0..4 {
        let (tx, mut contexts) = mpsc::unbounded_channel();
        let rt = builder(sqlite(&path), &clock).single_node(true).tool(asking(tx)).build().unwrap();
        let report = rt.triage_once(TriageScope::AllLeases).await.unwrap();
        assert_eq!(report, TriageReport { reasked: usize::from(life > 0), ..TriageReport::default() }, "life {life}");
        let task = match &id {
            Some(task) => task,
            None => id.insert(create(&rt, "ask").await),
        };
        assert_eq!(rt.run_due_once().await.unwrap(), 1, "life {life}");
        next(&mut contexts).await;
        eventually("it asks", || async { status(&rt, task).await == TaskStatus::InputRequired }).await;
        let r = stored(rt.store(), task).await;
        assert_eq!(r.attempt, 1, "life {life}");
        drop(rt); // dies without a word: its lease stays in the file
    }
    let id = id.unwrap();
    let (tx, _contexts) = mpsc::unbounded_channel();
    let last = builder(sqlite(&path), &clock).single_node(true).tool(asking(tx)).build().unwrap();
    assert_eq!(last.triage_once(TriageScope::AllLeases).await.unwrap().reasked, 1);
    // Answered before the re-run asks: the stored answer lets it go on at once.
    last.answer_input(&id, None, BTreeMap::from([("ok".to_owned(), json!({"action": "accept"}))])).await.unwrap();
    assert_eq!(run_settled(&last).await, 1);
    let done = stored(last.store(), &id).await;
    assert_eq!((done.status, done.attempt), (TaskStatus::Completed, 1));
    assert!(last.dead_letters().list(DeadLetterQuery::default()).await.unwrap().is_empty());
}
