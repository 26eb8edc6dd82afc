//! Input and cancel across instances: a task runs on one instance; its answer
//! (or cancel) is sent to another instance, addressed directly; the tool on
//! the first instance gets it within a generous bound. The latency itself is
//! measured by `cargo run --release -p mcp-tasks --example fleet_latency`.

use crate::fleet_support;
use std::time::{Duration, Instant};

use fleet_support::{Fleet, FleetConfig};
use mcp_tasks_client::rmcp::model::TaskStatus as WireStatus;
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_server::tools::fleet::JournalEntry;
use serde_json::{Value, json};

const TRIALS: usize = 5;
/// Far above what the fleet needs; a prompt delivery is measured, not asserted.
const BOUND: Duration = Duration::from_secs(10);

fn wall_ms() -> u64 {
    u64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

/// Waits for the journal entry `event` of `task`.
async fn journalled(fleet: &Fleet, task: &str, event: &str) -> JournalEntry {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(e) = fleet.journal().into_iter().find(|e| e.task == task && e.event == event) {
            return e;
        }
        assert!(Instant::now() < deadline, "task {task}: no {event:?} in the journal\n{}", fleet.logs());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn start(client: &TasksClient, tool: &str, args: Value) -> String {
    match client.start(tool, args, &DeclineAll, &Silent).await.unwrap() {
        Started::Task(handle) => handle.task_id,
        other => panic!("not a task: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_and_cancels_sent_to_another_instance_reach_the_tool() {
    let Some(db) = TestDatabase::create().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = FleetConfig::new(env!("CARGO_BIN_EXE_mcp-tasks"), db.url(), dir.path());
    let fleet = tokio::task::block_in_place(|| Fleet::start(config, 2));
    let mut clients = Vec::new();
    for instance in &fleet.instances {
        clients.push(TasksClient::connect(ClientOptions::new(instance.url())).await.unwrap());
    }

    for trial in 0..TRIALS {
        // Input: whichever instance runs the tool, the answer goes to the other.
        let id = start(&clients[trial % 2], "await_answer", json!({})).await;
        let started = journalled(&fleet, &id, "start").await;
        let runner = fleet.by_pid(started.pid).expect("an instance runs it");
        let other = &clients[1 - runner];
        let deadline = Instant::now() + Duration::from_secs(30);
        while other.get(&id).await.unwrap().task.status() != WireStatus::InputRequired {
            assert!(Instant::now() < deadline, "task {id} never asked");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let sent_at = wall_ms();
        let answer = [("go".to_owned(), json!({"action": "accept", "content": {"go": true}}))].into();
        other.answer(&id, answer).await.unwrap();
        let answered = journalled(&fleet, &id, "answered").await;
        assert_eq!(answered.pid, started.pid, "the tool that asked got the answer");
        let latency = Duration::from_millis(answered.at_ms.saturating_sub(sent_at));
        assert!(latency < BOUND, "answer through instance {} took {latency:?}", 1 - runner);
        let deadline = Instant::now() + Duration::from_secs(30);
        let done = loop {
            let got = other.get(&id).await.unwrap();
            if got.task.status().is_terminal() {
                break serde_json::to_value(&got.task).unwrap();
            }
            assert!(Instant::now() < deadline, "task {id} did not complete");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert_eq!(done["status"], "completed", "{done}");
        let reported: Value = serde_json::from_str(done["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(reported["pid"], started.pid, "{done}");
        eprintln!("trial {trial}: answer via the other instance reached the tool in {latency:?}");

        // Cancel: a long job on one instance, cancelled through the other.
        let id = start(&clients[trial % 2], "counted_job", json!({"ms": 600_000})).await;
        let started = journalled(&fleet, &id, "start").await;
        let runner = fleet.by_pid(started.pid).expect("an instance runs it");
        let other = &clients[1 - runner];
        let sent_at = wall_ms();
        other.cancel(&id).await.unwrap();
        let stopped = journalled(&fleet, &id, "stopped").await;
        assert_eq!(stopped.pid, started.pid);
        let latency = Duration::from_millis(stopped.at_ms.saturating_sub(sent_at));
        assert!(latency < BOUND, "cancel through the other instance took {latency:?}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while other.get(&id).await.unwrap().task.status() != WireStatus::Cancelled {
            assert!(Instant::now() < deadline, "task {id} did not end cancelled");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        eprintln!("trial {trial}: cancel via the other instance stopped the tool in {latency:?}");
    }
}
