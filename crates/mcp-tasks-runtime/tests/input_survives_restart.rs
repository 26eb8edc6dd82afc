//! Input answers are durable: after a restart (a new runtime on the same
//! SQLite file) the re-run handler gets the stored answer without asking again.

use crate::support;
use std::collections::BTreeMap;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{TaskContext, ToolFailure, TriageScope};
use serde_json::json;
use support::*;
use tokio::sync::mpsc;

/// Asks for the user's name; returns the answers.
async fn ask_name(ctx: &TaskContext) -> Result<BTreeMap<String, serde_json::Value>, ToolFailure> {
    let request = json!({"method": "elicitation/create", "params": {"message": "Your name?"}});
    ctx.request_input(BTreeMap::from([("name".to_owned(), request)]))
        .await
        .map_err(|e| ToolFailure::permanent(e.to_string()))
}

#[tokio::test]
async fn answers_survive_a_restart() {
    let (_dir, path) = sqlite_file();
    let clock = clock();

    // First life: the handler asks, gets the answer, then "crashes" (hangs,
    // never finishing) before it can complete.
    let (got_tx, mut got) = mpsc::unbounded_channel();
    let (g, _gate) = gate();
    let first = builder(sqlite(&path), &clock)
        .tool(FnTool::new("greet", move |ctx| {
            let (got_tx, g) = (got_tx.clone(), g.clone());
            async move {
                let _ = got_tx.send(ask_name(&ctx).await?);
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
    first
        .answer_input(
            &id,
            None,
            BTreeMap::from([("name".to_owned(), json!({"action": "accept", "content": {"name": "Ada"}}))]),
        )
        .await
        .unwrap();
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
                let answers = ask_name(&ctx).await?;
                let _ = asked_tx.send(());
                Ok(json!({"hello": answers["name"]["content"]["name"], "attempt": ctx.attempt()}))
            }
        }))
        .build()
        .unwrap();
    let report = second.triage_once(TriageScope::AllLeases).await.unwrap();
    assert_eq!(report.resumed, 1);
    assert_eq!(run_settled(&second).await, 1); // would hang (and time out) if it asked again
    asked.recv().await.unwrap();
    let done = second.get_task(&id, None).await.unwrap().record;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result, Some(json!({"hello": "Ada", "attempt": 2})));
}
