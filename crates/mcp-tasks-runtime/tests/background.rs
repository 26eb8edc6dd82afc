//! `start` spawns the executor: a created task runs without anyone calling
//! `run_due_once`, and `shutdown` stops the loops.

use crate::support;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{SystemClock, TaskStatus};
use mcp_tasks_runtime::{CreateTask, Runtime};
use serde_json::json;
use support::*;
use tokio::sync::mpsc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn started_runtime_runs_tasks_by_itself() {
    let (ran_tx, mut ran) = mpsc::unbounded_channel();
    let rt = Runtime::builder(memory())
        .clock(Arc::new(SystemClock))
        .tool(FnTool::new("t", move |ctx| {
            let ran_tx = ran_tx.clone();
            async move {
                let _ = ran_tx.send(ctx.task_id().clone());
                Ok(json!({"ok": true}))
            }
        }))
        .build()
        .unwrap();
    rt.start().await.unwrap();
    let id = rt.create_task(CreateTask::new("t", json!({}))).await.unwrap().record.id;
    let ran_id = tokio::time::timeout(Duration::from_secs(10), ran.recv()).await.unwrap().unwrap();
    assert_eq!(ran_id, id);
    idle(&rt).await;
    rt.shutdown(Duration::from_secs(1)).await;
    assert_eq!(status(&rt, &id).await, TaskStatus::Completed);
}

#[tokio::test]
async fn a_single_node_start_triages_every_lease_first() {
    let clock = support::clock();
    let store = memory();
    let (dead, _gate, id) = stalled(&store, &clock, json!({})).await;
    drop(dead);

    // The lease has not lapsed; only single-node knowledge lets us take it.
    let (ran_tx, mut ran) = mpsc::unbounded_channel();
    let restarted = builder(store.clone(), &clock)
        .single_node(true)
        .tool(FnTool::new("t", move |ctx| {
            let ran_tx = ran_tx.clone();
            async move {
                let _ = ran_tx.send(ctx.attempt());
                Ok(json!({}))
            }
        }))
        .build()
        .unwrap();
    restarted.start().await.unwrap();
    let attempt = tokio::time::timeout(Duration::from_secs(10), ran.recv()).await.unwrap().unwrap();
    assert_eq!(attempt, 2, "a restart counts as an attempt");
    idle(&restarted).await;
    restarted.shutdown(Duration::from_secs(1)).await;
    assert_eq!(status(&restarted, &id).await, TaskStatus::Completed);
}
