//! `mcp-tasks serve --concurrency N`: the flag reaches the executor (never
//! more than N journalled tools run at once), and 0 is refused with a
//! one-line error naming the flag before any file is created.

use crate::fleet_support;
use std::process::Command;
use std::time::{Duration, Instant};

use fleet_support::{Fleet, FleetConfig, StoreArg, read_journal};
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use serde_json::json;

/// Long enough that every task is created while the first ones still run.
const JOB_MS: u64 = 1500;
const TASKS: usize = 4;
const SLOTS: usize = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_runs_at_most_concurrency_tools_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = FleetConfig::new(env!("CARGO_BIN_EXE_mcp-tasks"), "", dir.path());
    config.store = StoreArg::Sqlite(dir.path().join("tasks.db"));
    config.extra = vec!["--concurrency".to_owned(), SLOTS.to_string()];
    let journal = config.journal.clone().expect("a journal");
    let fleet = Fleet::start(config, 1);
    let client = TasksClient::connect(ClientOptions::new(fleet.instances[0].url())).await.unwrap();
    for _ in 0..TASKS {
        let started = client.start("counted_job", json!({"ms": JOB_MS}), &DeclineAll, &Silent).await.unwrap();
        assert!(matches!(started, Started::Task(_)), "{started:?}");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let entries = loop {
        let entries = read_journal(&journal);
        if entries.iter().filter(|e| e.event == "finish").count() == TASKS {
            break entries;
        }
        assert!(Instant::now() < deadline, "not every task finished:\n{}", fleet.logs());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Replay the journal (its lines are in the order they happened).
    let (mut running, mut most) = (0_usize, 0_usize);
    for e in &entries {
        match e.event.as_str() {
            "start" => running += 1,
            _ => running -= 1,
        }
        most = most.max(running);
    }
    assert_eq!(most, SLOTS, "tools running at once, journal: {entries:?}");
}

#[test]
fn zero_slots_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["serve", "--listen", "127.0.0.1:0", "--concurrency", "0", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--concurrency") && stderr.contains("at least 1"), "{stderr}");
    assert!(!db.exists(), "a refused start must create no database");
}
