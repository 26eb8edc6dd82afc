//! End-to-end throughput of no-op tasks through the runtime on a real SQLite
//! file: every task is created durably, claimed, run and completed.
//!
//! Run with: `cargo run --release -p mcp-tasks-runtime --example throughput -- [TASKS] [CONCURRENCY]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_tasks_core::TaskStatus;
use mcp_tasks_runtime::{CreateTask, DEFAULT_CONCURRENCY, Runtime, TaskContext, TaskTool, ToolFailure, ToolSpec};
use mcp_tasks_sqlite::SqliteStore;
use serde_json::{Value, json};

struct Noop;

#[async_trait]
impl TaskTool for Noop {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("noop", "does nothing")
    }
    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        Ok(json!({"task": ctx.task_id().as_str()}))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let tasks: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2000);
    let concurrency: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(DEFAULT_CONCURRENCY);
    let dir = tempfile::tempdir()?;
    let store = Arc::new(SqliteStore::open(dir.path().join("bench.db"))?);
    let rt = Runtime::builder(store.clone()).tool(Arc::new(Noop)).concurrency(concurrency).build()?;
    rt.start().await?;

    let started = Instant::now();
    // Creations run concurrently, as requests from many clients would.
    let creators: Vec<_> = (0..tasks)
        .map(|i| {
            let rt = rt.clone();
            tokio::spawn(async move { rt.create_task(CreateTask::new("noop", json!({"i": i}))).await })
        })
        .collect();
    let mut ids = Vec::with_capacity(tasks);
    for c in creators {
        ids.push(c.await??.record.id);
    }
    let created = started.elapsed();
    loop {
        let counts = mcp_tasks_store::TaskStore::count_by_status(store.as_ref()).await?;
        if counts.get(&TaskStatus::Completed).copied().unwrap_or(0) as usize == tasks {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let done = started.elapsed();
    rt.shutdown(Duration::from_secs(5)).await;
    println!(
        "{tasks} tasks, concurrency {concurrency}: created in {:.3} s ({:.0}/s); all completed in {:.3} s ({:.0} tasks/s end to end)",
        created.as_secs_f64(),
        tasks as f64 / created.as_secs_f64(),
        done.as_secs_f64(),
        tasks as f64 / done.as_secs_f64()
    );
    Ok(())
}
