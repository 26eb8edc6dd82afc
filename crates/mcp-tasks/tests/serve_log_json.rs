//! `serve --log-format json`: every stderr line is one JSON object, and a
//! scripted run with a crash (a real SIGKILL) and a restart tells its story
//! in them — task created, retried with class and delay, dead-lettered,
//! each lapsed lease taken over at start-up with its decision, and the
//! start-up triage's counts — each with the task id and tool as fields.

use crate::serve_support;
use std::time::Duration;

use mcp_tasks_client::rmcp::model::TaskStatus as WireStatus;
use mcp_tasks_client::{ClientOptions, TasksClient};
use serde_json::{Value, json};
use serve_support::task_client::{start_task, wait_for_task};
use serve_support::{Server, spawn_logged};

const LOG_WAIT: Duration = Duration::from_secs(30);

fn options(url: &str) -> ClientOptions {
    serve_support::task_client::fast_options(url, 17)
}

/// Every stderr line so far, each parsed as JSON (a line that is not fails the test).
fn events(server: &Server) -> Vec<Value> {
    server
        .log_lines()
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")))
        .collect()
}

/// Waits for the event whose message contains `needle` and whose `fields.task` is `task` (any task if `None`).
fn wait_event(server: &Server, needle: &str, task: Option<&str>) -> Value {
    let deadline = std::time::Instant::now() + LOG_WAIT;
    loop {
        let found = events(server).into_iter().find(|e| {
            e["fields"]["message"].as_str().is_some_and(|m| m.contains(needle))
                && task.is_none_or(|t| e["fields"]["task"] == t)
        });
        if let Some(event) = found {
            return event;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no event {needle:?} for {task:?}:\n{}",
            server.log_lines().join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_tell_the_story_of_a_crash_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let flags = [
        "--log-format",
        "json",
        "--shutdown-grace",
        "1s",
        "--retry-base",
        "10ms",
        "--retry-max",
        "20ms",
        "--max-attempts",
        "3",
    ];
    let mut first = spawn_logged(&db, "127.0.0.1:0", &flags);
    let client = TasksClient::connect(options(&first.url)).await.unwrap();

    let retried = start_task(&client, "flaky_upstream", json!({"failures": 1, "ms": 10})).await;
    let created = wait_event(&first, "task created", Some(&retried));
    assert_eq!(created["level"], "INFO");
    assert_eq!(created["fields"]["tool"], "flaky_upstream");
    assert!(created["timestamp"].is_string() && created["target"].is_string(), "{created}");
    let retry = wait_event(&first, "retrying after a transient failure", Some(&retried));
    assert_eq!(retry["fields"]["tool"], "flaky_upstream");
    assert_eq!(retry["fields"]["class"], "transient");
    assert_eq!(retry["fields"]["next_attempt"], 2);
    assert!(retry["fields"]["delay_ms"].as_u64().is_some_and(|ms| ms <= 20), "{retry}");

    let poisoned = start_task(&client, "flaky_upstream", json!({"failures": 5, "ms": 10})).await;
    let dead = wait_event(&first, "dead-lettered", Some(&poisoned));
    assert_eq!(dead["level"], "WARN");
    assert_eq!(dead["fields"]["tool"], "flaky_upstream");
    assert_eq!(dead["fields"]["attempt"], 3);

    // At the crash: one task waiting for input, one running.
    let waiting = start_task(&client, "confirm_delete", json!({"filename": "log.txt"})).await;
    wait_for_task(&client, &waiting, |g| g.task.status() == WireStatus::InputRequired).await;
    let running = start_task(&client, "long_running_report", json!({"sections": 50, "ms": 1000})).await;
    wait_for_task(&client, &running, |g| g.task.task.status_message.is_some()).await;
    first.child.kill().unwrap(); // SIGKILL
    first.child.wait().unwrap();
    events(&first); // every line the first process wrote was JSON

    let mut second = spawn_logged(&db, &first.listen_addr(), &flags);
    let resumed = wait_event(&second, "lease taken over", Some(&running));
    assert_eq!(resumed["fields"]["tool"], "long_running_report");
    assert_eq!(resumed["fields"]["decision"], "resumed");
    let reasked = wait_event(&second, "lease taken over", Some(&waiting));
    assert_eq!(reasked["fields"]["tool"], "confirm_delete");
    assert_eq!(reasked["fields"]["decision"], "reasked");
    let triage = wait_event(&second, "start-up triage", None);
    assert_eq!(triage["level"], "INFO");
    let counts: Vec<_> =
        ["resumed", "reasked", "failed", "poisoned", "cancelled"].iter().map(|k| triage["fields"][k].clone()).collect();
    assert_eq!(counts, [json!(1), json!(1), json!(0), json!(0), json!(0)], "{triage}");

    wait_for_task(&client, &waiting, |g| g.task.status() == WireStatus::InputRequired).await;
    second.terminate();
    let exit = second.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let shutdown = wait_event(&second, "shutdown: waiting up to", None);
    assert_eq!(shutdown["fields"]["running"], 1);
    events(&second);
}
