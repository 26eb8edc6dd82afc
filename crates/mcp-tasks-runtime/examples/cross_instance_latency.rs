//! How long an answer given through one instance takes to reach the tool
//! running on another, on PostgreSQL (LISTEN/NOTIFY wake-ups), and how long
//! a task created through one instance takes to start on another.
//!
//! ```sh
//! cargo run --release -p mcp-tasks-runtime --example cross_instance_latency [TRIALS]
//! ```
//!
//! Needs the PostgreSQL of `MCP_TASKS_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); uses a fresh schema. Instance
//! B only serves requests; instance A runs the tool. Answer latency runs
//! from just before B's `answer_input` to the moment A's `request_input`
//! returns (B's read and guarded write, the commit and its NOTIFY, A's
//! listener, A's read and its write setting the task `working` again).
//! Without wake-ups a waiting handler re-reads every `INPUT_RECHECK`
//! (500 ms), and a new task waits for the claim interval (200 ms).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_tasks_core::TaskStatus;
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_runtime::{CreateTask, Runtime, TaskContext, TaskTool, ToolFailure, ToolSpec, async_trait};
use mcp_tasks_store::TaskStore;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Reports when it started and when its answer arrived.
struct Ask {
    started: mpsc::UnboundedSender<Instant>,
    answered: mpsc::UnboundedSender<Instant>,
}

#[async_trait]
impl TaskTool for Ask {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ask", "asks one question")
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        let _ = self.started.send(Instant::now());
        let questions = BTreeMap::from([("q".to_owned(), json!({"message": "go on?"}))]);
        let answers = ctx.request_input(questions).await.map_err(|e| ToolFailure::permanent(e.to_string()))?;
        let _ = self.answered.send(Instant::now());
        Ok(json!({ "answers": answers }))
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what:<34} n={:<4} median {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms",
        samples.len(),
        percentile(&samples, 50.0).as_secs_f64() * 1e3,
        percentile(&samples, 99.0).as_secs_f64() * 1e3,
        samples.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trials: usize = std::env::args().nth(1).map(|n| n.parse()).transpose()?.unwrap_or(100);
    let Some(db) = TestDatabase::create().await else {
        return Err("PostgreSQL is unreachable".into());
    };
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (answered_tx, mut answered) = mpsc::unbounded_channel();
    let tool = Arc::new(Ask { started: started_tx, answered: answered_tx });
    let open = |url: String| async move { PostgresStore::open(&url).await.map(|s| Arc::new(s) as Arc<dyn TaskStore>) };
    let a = Runtime::builder(open(db.url()).await?).tool(tool.clone()).build()?;
    let b = Runtime::builder(open(db.url()).await?).tool(tool).build()?;
    a.start().await?;
    // Let A's listener connect before the first trial.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let bound = Duration::from_secs(30);
    let (mut starts, mut answers) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        let created = Instant::now();
        let id = b.create_task(CreateTask::new("ask", json!({}))).await?.record.id;
        let began = tokio::time::timeout(bound, started.recv()).await?.ok_or("tool gone")?;
        starts.push(began - created);
        while b.store().get(&id).await?.map(|r| r.status) != Some(TaskStatus::InputRequired) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let sent = Instant::now();
        b.answer_input(&id, None, BTreeMap::from([("q".to_owned(), json!({"action": "accept"}))])).await?;
        let got = tokio::time::timeout(bound, answered.recv()).await?.ok_or("tool gone")?;
        answers.push(got - sent);
        a.idle().await;
    }
    report("task created on B starts on A", starts);
    report("answer sent to B reaches A's tool", answers);
    a.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
