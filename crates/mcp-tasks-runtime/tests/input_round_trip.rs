//! Durable input: a handler asks, the task shows `input_required` with the
//! pending requests, an answer wakes the handler, the task completes.

use crate::support;
use std::collections::BTreeMap;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::ToolFailure;
use serde_json::json;
use support::*;
use tokio::sync::mpsc;

fn ask(key: &str) -> BTreeMap<String, serde_json::Value> {
    BTreeMap::from([(key.to_owned(), json!({"method": "elicitation/create", "params": {"message": key}}))])
}

#[tokio::test]
async fn input_round_trip() {
    let clock = clock();
    let (asked_tx, mut asked) = mpsc::unbounded_channel();
    let tool = FnTool::new("confirm", move |ctx| {
        let asked_tx = asked_tx.clone();
        async move {
            let pending = ctx.request_input(ask("confirm"));
            let _ = asked_tx.send(());
            let answers = pending.await.map_err(|e| ToolFailure::permanent(e.to_string()))?;
            Ok(json!({"answer": answers["confirm"]}))
        }
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "confirm").await;
    rt.run_due_once().await.unwrap();
    asked.recv().await.unwrap();
    // Wait (bounded) for the request to be stored.
    let mut view = rt.get_task(&id, None).await.unwrap();
    for _ in 0..200 {
        if view.record.status == TaskStatus::InputRequired {
            break;
        }
        tokio::task::yield_now().await;
        view = rt.get_task(&id, None).await.unwrap();
    }
    assert_eq!(view.record.status, TaskStatus::InputRequired);
    let pending: Vec<_> = view.record.pending_input().map(|(k, _)| k.clone()).collect();
    assert_eq!(pending, ["confirm"]);

    // Unknown keys are ignored.
    rt.answer_input(&id, None, BTreeMap::from([("other".to_owned(), json!(1))])).await.unwrap();
    assert_eq!(rt.get_task(&id, None).await.unwrap().record.input_responses.len(), 0);

    rt.answer_input(&id, None, BTreeMap::from([("confirm".to_owned(), json!({"action": "accept"}))])).await.unwrap();
    idle(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Completed);
    assert_eq!(r.result, Some(json!({"answer": {"action": "accept"}})));
    assert_eq!(r.pending_input().count(), 0);
}

#[tokio::test]
async fn a_cancel_requested_task_never_goes_back_to_input_required() {
    let clock = clock();
    let (g, mut gate) = gate();
    let (result_tx, mut result) = mpsc::unbounded_channel();
    let tool = FnTool::new("late_asker", move |ctx| {
        let (g, result_tx) = (g.clone(), result_tx.clone());
        async move {
            g.pass(&ctx).await;
            let r = ctx.request_input(ask("late")).await;
            let _ = result_tx.send(r.map_err(|e| e.to_string()));
            Ok(json!({}))
        }
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "late_asker").await;
    rt.run_due_once().await.unwrap();
    gate.arrived().await;
    rt.cancel_task(&id, None).await.unwrap();
    let asked = result.recv().await.unwrap();
    assert!(asked.unwrap_err().contains("cancelled"));
    idle(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Cancelled);
    assert!(r.input_requests.is_empty(), "the request was never stored");
}
