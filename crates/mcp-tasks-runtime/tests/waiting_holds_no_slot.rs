//! A handler waiting for input holds no executor slot: with every slot's
//! task waiting for an answer, a short task still runs at once, and the
//! waiting ones take a slot again when answered.

use crate::support;
use std::collections::BTreeMap;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{CreateTask, ToolFailure};
use serde_json::{Value, json};
use support::*;
use tokio::sync::mpsc;

fn ask(key: &str) -> BTreeMap<String, Value> {
    BTreeMap::from([(key.to_owned(), json!({"method": "elicitation/create", "params": {"message": key}}))])
}

/// A tool that asks one question, reports when the answer let it go on, and returns the answer.
fn asking(went_on: mpsc::UnboundedSender<String>) -> std::sync::Arc<FnTool> {
    FnTool::new("ask", move |ctx| {
        let went_on = went_on.clone();
        async move {
            let answers = ctx.request_input(ask("ok")).await.map_err(|e| ToolFailure::permanent(e.to_string()))?;
            let _ = went_on.send(ctx.task_id().to_string());
            Ok(json!({"answer": answers["ok"]}))
        }
    })
}

fn yes() -> BTreeMap<String, Value> {
    BTreeMap::from([("ok".to_owned(), json!({"action": "accept", "content": {}}))])
}

#[tokio::test]
async fn tasks_waiting_for_input_do_not_stall_the_executor() {
    const N: usize = 3;
    let clock = clock();
    let (went_on_tx, mut went_on) = mpsc::unbounded_channel();
    // Only wake-ups drive claims: the timer would not fire within the test.
    let rt = builder(memory(), &clock)
        .concurrency(N)
        .claim_interval(Duration::from_secs(3600))
        .tool(asking(went_on_tx))
        .tool(returning("quick", json!({"quick": true})))
        .build()
        .unwrap();
    let mut waiting = Vec::new();
    for _ in 0..N {
        waiting.push(create(&rt, "ask").await);
        clock.advance(Duration::from_millis(1)); // claimed oldest first
    }
    let quick = create(&rt, "quick").await;
    rt.start().await.unwrap();

    // Every slot's task asked; the short one ran in a slot they gave back.
    for id in &waiting {
        eventually("the task waits for input", || async { status(&rt, id).await == TaskStatus::InputRequired }).await;
    }
    eventually("the short task completes", || async { status(&rt, &quick).await == TaskStatus::Completed }).await;
    assert_eq!(stored(rt.store(), &quick).await.result, Some(json!({"quick": true})));

    // Answered, each waiting handler goes on and completes.
    for id in &waiting {
        rt.answer_input(id, None, yes()).await.unwrap();
    }
    for id in &waiting {
        eventually("the answered task completes", || async { status(&rt, id).await == TaskStatus::Completed }).await;
        assert_eq!(stored(rt.store(), id).await.attempt, 1);
    }
    let mut resumed: Vec<String> = Vec::new();
    while let Ok(id) = went_on.try_recv() {
        resumed.push(id);
    }
    assert_eq!(resumed.len(), N);
    rt.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn an_answered_handler_takes_a_slot_again_before_it_goes_on() {
    let clock = clock();
    let (went_on_tx, mut went_on) = mpsc::unbounded_channel();
    let (g, mut gate) = gate();
    let rt =
        builder(memory(), &clock).concurrency(1).tool(asking(went_on_tx)).tool(held("busy", &g, json!({}))).build().unwrap();
    let asker = create(&rt, "ask").await;
    assert_eq!(rt.run_due_once().await.unwrap(), 1);
    eventually("the task waits for input", || async { status(&rt, &asker).await == TaskStatus::InputRequired }).await;

    // The only slot is free again: a busy task takes it and holds it.
    let busy = rt.create_task(CreateTask::new("busy", json!({}))).await.unwrap().record.id;
    assert_eq!(rt.run_due_once().await.unwrap(), 1, "the waiting handler gave its slot back");
    gate.arrived().await;

    // Answered while the slot is busy: the handler waits for it, executing nothing.
    rt.answer_input(&asker, None, yes()).await.unwrap();
    let early = tokio::time::timeout(Duration::from_millis(300), went_on.recv()).await;
    assert!(early.is_err(), "the answered handler went on without a slot: {early:?}");
    assert_eq!(rt.run_due_once().await.unwrap(), 0, "no slot for new work either");

    gate.open(1); // the busy task returns its slot
    let went = tokio::time::timeout(Duration::from_secs(10), went_on.recv()).await.expect("the answered handler goes on");
    assert_eq!(went.as_deref(), Some(asker.as_str()));
    idle(&rt).await;
    assert_eq!(status(&rt, &asker).await, TaskStatus::Completed);
    assert_eq!(status(&rt, &busy).await, TaskStatus::Completed);
}

#[tokio::test]
async fn waiting_handlers_are_bounded() {
    let clock = clock();
    let (went_on_tx, _went_on) = mpsc::unbounded_channel();
    let rt = builder(memory(), &clock).concurrency(1).max_waiting(1).tool(asking(went_on_tx)).build().unwrap();
    let first = create(&rt, "ask").await;
    assert_eq!(rt.run_due_once().await.unwrap(), 1);
    eventually("the first waits", || async { status(&rt, &first).await == TaskStatus::InputRequired }).await;
    let second = create(&rt, "ask").await;
    assert_eq!(rt.run_due_once().await.unwrap(), 1, "one more may wait");
    eventually("the second waits", || async { status(&rt, &second).await == TaskStatus::InputRequired }).await;
    let third = create(&rt, "ask").await;
    assert_eq!(rt.run_due_once().await.unwrap(), 0, "the waiting bound is reached: nothing more is claimed");
    rt.answer_input(&first, None, yes()).await.unwrap();
    eventually("the first completes", || async { status(&rt, &first).await == TaskStatus::Completed }).await;
    eventually("its driver is gone", || async { rt.running() == 1 }).await;
    assert_eq!(rt.run_due_once().await.unwrap(), 1, "room again");
    eventually("the third waits", || async { status(&rt, &third).await == TaskStatus::InputRequired }).await;
}
