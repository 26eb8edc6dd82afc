//! `start` spawns the executor: a created task runs without anyone calling
//! `run_due_once`, and `shutdown` stops the loops.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_tasks_core::{SystemClock, TaskStatus};
use mcp_tasks_runtime::{CreateTask, Runtime};
use serde_json::json;
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
