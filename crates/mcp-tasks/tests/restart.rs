//! Crash and restart on real processes: `mcp-tasks serve` is SIGKILLed with
//! tasks completed, running and waiting for input, then started again on the
//! same SQLite file and port. Every handle resolves, the completed result is
//! intact, the running task is triaged and finishes, the waiting task still
//! waits and completes once answered, and a client that was following a task
//! across the crash carries on to its result. SIGTERM then stops it cleanly.

use crate::serve_support;
use std::time::Duration;

use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TaskHandle, TaskOutcome, TasksClient};
use mcp_tasks_core::TaskStatus;
use serde_json::{Value, json};
use serve_support::spawn;

fn options(url: &str) -> ClientOptions {
    let mut o = serve_support::task_client::fast_options(url, 3);
    o.give_up_after = Duration::from_secs(60);
    o
}

async fn start_task(client: &TasksClient, tool: &str, args: Value) -> TaskHandle {
    match client.start(tool, args, &DeclineAll, &Silent).await.unwrap() {
        Started::Task(handle) => handle,
        other => panic!("{tool} did not become a task: {other:?}"),
    }
}

/// Polls `tasks/get` until `done` holds.
async fn wait_for(
    client: &TasksClient,
    id: &str,
    done: impl Fn(&rmcp_task::GetTaskResult) -> bool,
) -> rmcp_task::GetTaskResult {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got = client.get(id).await.unwrap();
        if done(&got) {
            return got;
        }
        assert!(tokio::time::Instant::now() < deadline, "task {id}: {got:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

mod rmcp_task {
    pub(crate) use mcp_tasks_client::rmcp::model::GetTaskResult;
}

fn result_of(got: &rmcp_task::GetTaskResult) -> Value {
    serde_json::to_value(&got.task).unwrap()["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_restarts_and_every_task_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut first = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s"]);
    let url = first.url.clone();
    let client = TasksClient::connect(options(&url)).await.unwrap();

    // Completed before the crash.
    let done = start_task(&client, "slow_compute", json!({"ms": 10, "label": "before"})).await;
    let outcome = client.follow(&done, &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed { .. }), "{outcome:?}");
    let done_before = result_of(&client.get(&done.task_id).await.unwrap());
    assert_eq!(done_before["content"][0]["text"], "before: computed in 10 ms");

    // Waiting for input at the crash.
    let asking = start_task(&client, "confirm_delete", json!({"filename": "survivor.txt"})).await;
    wait_for(&client, &asking.task_id, |g| g.task.status() == mcp_tasks_client::rmcp::model::TaskStatus::InputRequired)
        .await;

    // Running at the crash (its status message shows a handler has it).
    let running = start_task(&client, "long_running_report", json!({"sections": 2, "ms": 400, "topic": "crashes"})).await;
    wait_for(&client, &running.task_id, |g| g.task.task.status_message.is_some()).await;
    // A client follows it across the crash.
    let follower = {
        let client = TasksClient::connect(options(&url)).await.unwrap();
        let handle = running.clone();
        tokio::spawn(async move { client.follow(&handle, &DeclineAll, &Silent).await })
    };

    first.child.kill().unwrap(); // SIGKILL
    first.child.wait().unwrap();

    let mut second = spawn(&db, &first.listen_addr(), &["--shutdown-grace", "1s"]);
    assert_eq!(second.url, url);

    // The follower carries on to the result — well before the dead process's
    // 30 s lease could lapse: start-up triage, not lease expiry, resumed it.
    let outcome = tokio::time::timeout(Duration::from_secs(20), follower).await.unwrap().unwrap().unwrap();
    match &outcome {
        TaskOutcome::Completed { result, .. } => {
            assert!(result["content"][0]["text"].as_str().unwrap().contains("Report on crashes"), "{result}");
        }
        other => panic!("the triaged task did not finish: {other:?}"),
    }
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["tasks", "show", &running.task_id, "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    let record: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(record["attempt"], 2, "triage resumed the in-flight task as its next attempt: {record}");

    // The completed task is intact.
    let client = TasksClient::connect(options(&url)).await.unwrap();
    let done_after = client.get(&done.task_id).await.unwrap();
    assert_eq!(mcp_tasks_client::core_status(done_after.task.status()), TaskStatus::Completed);
    assert_eq!(result_of(&done_after), done_before);

    // The waiting task still waits, with its request, and completes once answered.
    let waiting =
        wait_for(&client, &asking.task_id, |g| g.task.status() != mcp_tasks_client::rmcp::model::TaskStatus::Working).await;
    assert_eq!(mcp_tasks_client::core_status(waiting.task.status()), TaskStatus::InputRequired, "{waiting:?}");
    let answer = [("confirm".to_owned(), json!({"action": "accept", "content": {"confirm": true}}))].into();
    client.answer(&asking.task_id, answer).await.unwrap();
    let finished = wait_for(&client, &asking.task_id, |g| g.task.status().is_terminal()).await;
    assert_eq!(result_of(&finished)["content"][0]["text"], "Deleted survivor.txt");

    // SIGTERM: a clean exit.
    second.terminate();
    let exit = second.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}
