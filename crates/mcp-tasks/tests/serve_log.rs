//! `mcp-tasks serve`'s log (default filter, no `RUST_LOG`) says what happened
//! to the work: a retry and a dead letter, one line each with task id and
//! tool; after a SIGKILL and a restart, the start-up triage's counts; at
//! SIGTERM, what shutdown waits for and how long.

use crate::serve_support;
use std::time::Duration;

use mcp_tasks_client::rmcp::model::TaskStatus as WireStatus;
use mcp_tasks_client::{ClientOptions, TasksClient};
use serde_json::json;
use serve_support::spawn_logged;
use serve_support::task_client::{start_task, wait_for_task};

const LOG_WAIT: Duration = Duration::from_secs(30);

fn options(url: &str) -> ClientOptions {
    serve_support::task_client::fast_options(url, 13)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_tells_what_happened_to_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let flags = ["--shutdown-grace", "1s", "--retry-base", "10ms", "--retry-max", "20ms", "--max-attempts", "3"];
    let mut first = spawn_logged(&db, "127.0.0.1:0", &flags);
    let client = TasksClient::connect(options(&first.url)).await.unwrap();

    let retried = start_task(&client, "flaky_upstream", json!({"failures": 1, "ms": 10})).await;
    let line = first.wait_for_log("retrying after a transient failure", LOG_WAIT);
    assert!(line.contains(&retried) && line.contains("flaky_upstream") && line.contains("attempt 2 of 3"), "{line}");

    let poisoned = start_task(&client, "flaky_upstream", json!({"failures": 5, "ms": 10})).await;
    let line = first.wait_for_log("dead-lettered", LOG_WAIT);
    assert!(line.contains(&poisoned) && line.contains("flaky_upstream"), "{line}");

    // At the crash: one task waiting for input, one running.
    let waiting = start_task(&client, "confirm_delete", json!({"filename": "log.txt"})).await;
    wait_for_task(&client, &waiting, |g| g.task.status() == WireStatus::InputRequired).await;
    let running = start_task(&client, "long_running_report", json!({"sections": 50, "ms": 1000})).await;
    wait_for_task(&client, &running, |g| g.task.task.status_message.is_some()).await;
    first.child.kill().unwrap(); // SIGKILL
    first.child.wait().unwrap();

    let mut second = spawn_logged(&db, &first.listen_addr(), &flags);
    let line = second.wait_for_log("start-up triage", LOG_WAIT);
    assert!(line.contains("1 resumed, 1 re-asked, 0 failed, 0 poisoned, 0 cancelled"), "{line}");
    assert!(line.contains("INFO"), "{line}");

    // Both are back: the report running again, the question asked again.
    wait_for_task(&client, &waiting, |g| g.task.status() == WireStatus::InputRequired).await;
    wait_for_task(&client, &running, |g| g.task.task.status_message.as_deref().is_some_and(|m| !m.starts_with("resumed")))
        .await;
    second.terminate();
    let exit = second.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let line = second.wait_for_log("shutdown: waiting up to", LOG_WAIT);
    assert!(line.contains("waiting up to 1 s for 1 running task; 1 waiting for input handed back"), "{line}");
    second.wait_for_log("still running stopped and handed back", LOG_WAIT);
}
