//! Cancellation: an unleased task is cancelled at once; a running one is
//! flagged, its handler sees the token, and it ends `cancelled` whatever the
//! handler returns; a terminal task is left unchanged.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::ToolFailure;
use serde_json::json;
use support::*;

#[tokio::test]
async fn an_unleased_task_is_cancelled_at_once() {
    let clock = clock();
    let tool = returning("t", json!({}));
    let rt = builder(memory(), &clock).tool(tool.clone()).build().unwrap();
    let id = create(&rt, "t").await;
    let view = rt.cancel_task(&id, None).await.unwrap();
    assert_eq!(view.record.status, TaskStatus::Cancelled);
    assert_eq!(view.record.terminal_at, Some(T0));
    assert_eq!(rt.run_due_once().await.unwrap(), 0);
    assert_eq!(tool.runs(), 0);
}

#[tokio::test]
async fn a_running_handler_sees_cancellation_and_the_task_ends_cancelled() {
    let clock = clock();
    let (g, mut gate) = gate();
    let (passed_tx, mut passed_rx) = tokio::sync::mpsc::unbounded_channel();
    let tool = FnTool::new("slow", move |ctx| {
        let (g, passed_tx) = (g.clone(), passed_tx.clone());
        async move {
            let _ = passed_tx.send(g.pass(&ctx).await);
            ctx.sleep(Duration::from_secs(3600)).await.map_err(|_| ToolFailure::permanent("cancelled"))?;
            Ok(json!({}))
        }
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "slow").await;
    rt.run_due_once().await.unwrap();
    gate.arrived().await;

    let ack = rt.cancel_task(&id, None).await.unwrap();
    assert_eq!(ack.record.status, TaskStatus::Working, "acknowledged, not yet honoured");
    assert!(ack.record.cancel_requested);
    idle(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Cancelled);
    assert_eq!(r.lease, None);
    assert_eq!(passed_rx.try_recv(), Ok(false), "released by cancellation, not by the gate");
}

#[tokio::test]
async fn a_handler_returning_ok_after_cancel_still_ends_cancelled() {
    let clock = clock();
    let (g, mut gate) = gate();
    let tool = FnTool::new("stubborn", move |ctx| {
        let g = g.clone();
        async move {
            g.pass(&ctx).await;
            Ok(json!({"ignored": "cancellation"}))
        }
    });
    let rt = builder(memory(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "stubborn").await;
    rt.run_due_once().await.unwrap();
    gate.arrived().await;
    rt.cancel_task(&id, None).await.unwrap();
    idle(&rt).await;
    let r = rt.get_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Cancelled);
    assert_eq!(r.result, None);
}

#[tokio::test]
async fn cancelling_a_terminal_task_changes_nothing() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({"done": true}))).build().unwrap();
    let id = create(&rt, "t").await;
    run_settled(&rt).await;
    let before = rt.get_task(&id, None).await.unwrap().record;
    let after = rt.cancel_task(&id, None).await.unwrap().record;
    assert_eq!(before, after);
    assert_eq!(after.status, TaskStatus::Completed);
}

#[tokio::test]
async fn a_task_whose_lease_lapsed_is_cancelled_at_once() {
    let clock = clock();
    let store = memory();
    let (stalled, gate, id) = stalled(&store, &clock, json!({"late": true})).await;
    let front = builder(store.clone(), &clock).build().unwrap();
    assert!(front.cancel_task(&id, None).await.unwrap().record.cancel_requested, "leased: flagged");
    clock.advance(Duration::from_secs(30)); // the stalled executor's lease lapses
    let r = front.cancel_task(&id, None).await.unwrap().record;
    assert_eq!(r.status, TaskStatus::Cancelled, "nobody would honour the flag: cancelled directly");
    gate.open(1);
    idle(&stalled).await;
    assert_eq!(stored(&store, &id).await, r, "the stalled executor's late result changed nothing");
}

/// A cancel acknowledged to the client wins over the deadline: when the
/// handler has not stopped by the time the timeout sweep runs, the task ends
/// `cancelled`, not `failed` with a timeout.
#[tokio::test]
async fn an_acknowledged_cancel_outlives_the_deadline() {
    let clock = clock();
    let store = memory();
    let (rt, _gate, id) = stalled(&store, &clock, json!({})).await;
    let ack = rt.cancel_task(&id, None).await.unwrap();
    assert!(ack.record.cancel_requested && ack.record.status.is_live(), "{:?}", ack.record);
    clock.advance(Duration::from_secs(1800));
    rt.get_task(&id, None).await.unwrap(); // polled: only the timeout sweep applies
    rt.reap_once().await.unwrap();
    let r = stored(&store, &id).await;
    assert_eq!(r.status, TaskStatus::Cancelled, "{r:?}");
    assert_eq!(r.status_message.as_deref(), Some("cancelled at the client's request"));
}
