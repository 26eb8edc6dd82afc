//! Tasks waiting for input survive repeated SIGKILLs of `mcp-tasks serve`
//! without being charged: each restart re-asks them as the same attempt, so
//! none ends failed or dead-lettered (even after more kills than
//! `--max-attempts`), and answering them afterwards completes them.

use crate::serve_support;
use std::time::Duration;

use mcp_tasks_client::rmcp::model::{GetTaskResult, TaskStatus as WireStatus};
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_core::{TaskId, TaskStatus};
use mcp_tasks_store::{DeadLetterQuery, TaskStore};
use serde_json::json;
use serve_support::{Server, spawn};

const TASKS: usize = 6;
const KILLS: usize = 4;

fn options(url: &str) -> ClientOptions {
    serve_support::task_client::fast_options(url, 11)
}

async fn wait_for(client: &TasksClient, id: &str, done: impl Fn(&GetTaskResult) -> bool) -> GetTaskResult {
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

/// Waits until every task asks (again) for input, its question shown.
async fn all_asking(client: &TasksClient, ids: &[String]) {
    for id in ids {
        let got = wait_for(client, id, |g| g.task.status() != WireStatus::Working).await;
        assert_eq!(got.task.status(), WireStatus::InputRequired, "{got:?}");
    }
}

fn kill(mut server: Server) -> String {
    let addr = server.listen_addr();
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kills_while_waiting_for_input_cost_no_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let flags = ["--max-attempts", "3", "--shutdown-grace", "1s"];
    let mut server = spawn(&db, "127.0.0.1:0", &flags);
    let url = server.url.clone();
    let client = TasksClient::connect(options(&url)).await.unwrap();
    let mut ids = Vec::new();
    for n in 0..TASKS {
        match client.start("confirm_delete", json!({"filename": format!("f{n}.txt")}), &DeclineAll, &Silent).await.unwrap() {
            Started::Task(handle) => ids.push(handle.task_id),
            other => panic!("not a task: {other:?}"),
        }
    }
    all_asking(&client, &ids).await;

    for _ in 0..KILLS {
        let addr = kill(server);
        server = spawn(&db, &addr, &flags);
        assert_eq!(server.url, url);
        all_asking(&client, &ids).await;
    }

    for (n, id) in ids.iter().enumerate() {
        let answer = [("confirm".to_owned(), json!({"action": "accept", "content": {"confirm": true}}))].into();
        client.answer(id, answer).await.unwrap();
        let done = wait_for(&client, id, |g| g.task.status().is_terminal()).await;
        let text = serde_json::to_value(&done.task).unwrap()["result"]["content"][0]["text"].clone();
        assert_eq!(text, format!("Deleted f{n}.txt"), "{done:?}");
    }
    server.terminate();
    assert!(server.child.wait().unwrap().success());

    let store = mcp_tasks_sqlite::SqliteStore::open(&db).unwrap();
    for id in &ids {
        let r = store.get(&TaskId(id.clone())).await.unwrap().unwrap();
        assert_eq!((r.status, r.attempt), (TaskStatus::Completed, 1), "{r:?}");
    }
    let letters = store.list_dead_letters(DeadLetterQuery { include_requeued: true, ..Default::default() }).await.unwrap();
    assert!(letters.is_empty(), "{letters:?}");
}
