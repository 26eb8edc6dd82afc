//! Input answers are durable: after a restart (a new runtime on the same
//! SQLite file) the re-run handler gets the stored answer without asking again.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{ToolFailure, TriageScope};
use serde_json::json;
use tokio::sync::mpsc;

fn ask_name() -> BTreeMap<String, serde_json::Value> {
    BTreeMap::from([("name".to_owned(), json!({"method": "elicitation/create", "params": {"message": "Your name?"}}))])
}

#[tokio::test]
async fn answers_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let clock = clock();

    // First life: the handler asks, gets the answer, then "crashes" (hangs,
    // never finishing) before it can complete.
    let (got_tx, mut got) = mpsc::unbounded_channel();
    let (g, _gate) = gate();
    let first = builder(sqlite(&path), &clock)
        .tool(FnTool::new("greet", move |ctx| {
            let (got_tx, g) = (got_tx.clone(), g.clone());
            async move {
                let answers = ctx.request_input(ask_name()).await.map_err(|e| ToolFailure::permanent(e.to_string()))?;
                let _ = got_tx.send(answers);
                g.pass_stubbornly(&ctx).await;
                Ok(json!({}))
            }
        }))
        .build()
        .unwrap();
    let id = create(&first, "greet").await;
    first.run_due_once().await.unwrap();
    eventually("the request is stored", || async { status(&first, &id).await == TaskStatus::InputRequired }).await;
    let shown = first.get_task(&id, None).await.unwrap().record;
    assert_eq!(shown.pending_input().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["name"]);
    first.answer_input(&id, None, BTreeMap::from([("name".to_owned(), json!({"action": "accept", "content": {"name": "Ada"}}))])).await.unwrap();
    let answers = tokio::time::timeout(Duration::from_secs(10), got.recv()).await.unwrap().unwrap();
    assert_eq!(answers["name"]["content"]["name"], "Ada");
    assert_eq!(status(&first, &id).await, TaskStatus::Working, "answered: working again");

    // Second life: same file, a new runtime; startup triage resumes the task.
    let (asked_tx, mut asked) = mpsc::unbounded_channel::<()>();
    let second = builder(sqlite(&path), &clock)
        .single_node(true)
        .tool(FnTool::new("greet", move |ctx| {
            let asked_tx = asked_tx.clone();
            async move {
                let answers = ctx.request_input(ask_name()).await.map_err(|e| ToolFailure::permanent(e.to_string()))?;
                let _ = asked_tx.send(());
                Ok(json!({"hello": answers["name"]["content"]["name"], "attempt": ctx.attempt()}))
            }
        }))
        .build()
        .unwrap();
    let report = second.triage_once(TriageScope::AllLeases).await.unwrap();
    assert_eq!(report.resumed, 1);
    assert_eq!(second.run_due_once().await.unwrap(), 1);
    idle(&second).await; // would hang (and time out) if it asked again
    asked.recv().await.unwrap();
    let done = second.get_task(&id, None).await.unwrap().record;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result, Some(json!({"hello": "Ada", "attempt": 2})));
}
