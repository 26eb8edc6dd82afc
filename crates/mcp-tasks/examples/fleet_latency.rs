//! How long an answer or a cancel sent to one instance takes to reach a tool
//! running on another, over many trials: two `mcp-tasks serve` processes on
//! one PostgreSQL schema, the `fleet` tools journalling when the answer (or
//! the cancel) reached the handler.
//!
//! ```sh
//! cargo build --release -p mcp-tasks
//! cargo run --release -p mcp-tasks --example fleet_latency   # FLEET_TRIALS=200 by default
//! ```
//!
//! PostgreSQL comes from `MCP_TASKS_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); the run uses a throw-away schema.

#[path = "../tests/fleet_support/mod.rs"]
mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{Fleet, FleetConfig};
use mcp_tasks_client::rmcp::model::TaskStatus as WireStatus;
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_server::tools::fleet::JournalEntry;
use serde_json::{Value, json};

const DEFAULT_TRIALS: usize = 200;

fn wall_ms() -> u64 {
    u64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

/// The `mcp-tasks` binary next to this example (`target/release/mcp-tasks`),
/// or `MCP_TASKS_BIN`.
pub fn mcp_tasks_binary() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("MCP_TASKS_BIN") {
        return path.into();
    }
    let exe = std::env::current_exe().expect("own path");
    let path = exe.parent().and_then(|examples| examples.parent()).expect("target dir").join("mcp-tasks");
    assert!(path.is_file(), "{} is missing: run `cargo build --release -p mcp-tasks` first", path.display());
    path
}

async fn journalled(fleet: &Fleet, task: &str, event: &str) -> JournalEntry {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(e) = fleet.journal().into_iter().rev().find(|e| e.task == task && e.event == event) {
            return e;
        }
        assert!(Instant::now() < deadline, "task {task}: no {event:?} in the journal");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn start(client: &TasksClient, tool: &str, args: Value) -> String {
    match client.start(tool, args, &DeclineAll, &Silent).await.unwrap() {
        Started::Task(handle) => handle.task_id,
        other => panic!("not a task: {other:?}"),
    }
}

fn summary(name: &str, mut ms: Vec<u64>) {
    ms.sort_unstable();
    let at = |q: f64| ms[((ms.len() as f64 * q).ceil() as usize).clamp(1, ms.len()) - 1];
    println!(
        "{name:<44} n={:<5} median {:>5} ms   p90 {:>5} ms   p99 {:>5} ms   max {:>5} ms",
        ms.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        ms[ms.len() - 1]
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let trials: usize = std::env::var("FLEET_TRIALS").ok().and_then(|t| t.parse().ok()).unwrap_or(DEFAULT_TRIALS);
    let db = TestDatabase::create().await.expect("PostgreSQL is reachable");
    let dir = tempfile::tempdir().unwrap();
    let config = FleetConfig::new(mcp_tasks_binary(), db.url(), dir.path());
    println!("lease {:?}, reaper every {:?}; 2 instances on one schema", config.timing.lease, config.timing.reaper);
    let fleet = tokio::task::block_in_place(|| Fleet::start(config, 2));
    let mut clients = Vec::new();
    for instance in &fleet.instances {
        clients.push(TasksClient::connect(ClientOptions::new(instance.url())).await.unwrap());
    }
    let (mut answers, mut cancels) = (Vec::new(), Vec::new());
    for trial in 0..trials {
        let id = start(&clients[trial % 2], "await_answer", json!({})).await;
        let runner = fleet.by_pid(journalled(&fleet, &id, "start").await.pid).unwrap();
        let other = &clients[1 - runner];
        while other.get(&id).await.unwrap().task.status() != WireStatus::InputRequired {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Spread the answers over the waiting handler's cycle.
        tokio::time::sleep(Duration::from_millis((trial as u64 * 37) % 500)).await;
        let sent = wall_ms();
        other.answer(&id, [("go".to_owned(), json!({"action": "accept", "content": {"go": true}}))].into()).await.unwrap();
        answers.push(journalled(&fleet, &id, "answered").await.at_ms.saturating_sub(sent));

        let id = start(&clients[trial % 2], "counted_job", json!({"ms": 600_000})).await;
        let runner = fleet.by_pid(journalled(&fleet, &id, "start").await.pid).unwrap();
        tokio::time::sleep(Duration::from_millis((trial as u64 * 53) % 700)).await;
        let sent = wall_ms();
        clients[1 - runner].cancel(&id).await.unwrap();
        cancels.push(journalled(&fleet, &id, "stopped").await.at_ms.saturating_sub(sent));
        if (trial + 1) % 50 == 0 {
            eprintln!("{} trials", trial + 1);
        }
    }
    summary("answer via instance B -> tool on instance A", answers);
    summary("cancel via instance B -> tool on instance A", cancels);
}
