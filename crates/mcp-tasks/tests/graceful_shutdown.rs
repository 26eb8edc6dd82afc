//! SIGTERM stops `mcp-tasks serve` gracefully: a handler that finishes within
//! the grace period writes its result; one that does not releases its lease
//! (it stays `working`, unleased) and the next start runs it to the end.

use crate::serve_support;
use std::time::{Duration, Instant};

use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TaskOutcome, TasksClient};
use mcp_tasks_core::{TaskId, TaskStatus};
use mcp_tasks_store::TaskStore;
use serde_json::json;
use serve_support::spawn;

fn options(url: &str) -> ClientOptions {
    serve_support::task_client::fast_options(url, 5)
}

async fn start_running(client: &TasksClient, sections: u32, ms: u32) -> String {
    let Started::Task(handle) =
        client.start("long_running_report", json!({"sections": sections, "ms": ms}), &DeclineAll, &Silent).await.unwrap()
    else {
        panic!("not a task")
    };
    // Its status message shows a handler is running it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.get(&handle.task_id).await.unwrap().task.task.status_message.is_none() {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    handle.task_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_short_work_finish_and_releases_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut server = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s"]);
    let client = TasksClient::connect(options(&server.url)).await.unwrap();
    let short = start_running(&client, 1, 400).await;
    let long = start_running(&client, 2, 1500).await;

    let stopping = Instant::now();
    server.terminate();
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(stopping.elapsed() < Duration::from_secs(5), "took {:?}", stopping.elapsed());

    let store = mcp_tasks_sqlite::SqliteStore::open(&db).unwrap();
    let finished = store.get(&TaskId(short.clone())).await.unwrap().unwrap();
    assert_eq!(finished.status, TaskStatus::Completed, "{finished:?}");
    let released = store.get(&TaskId(long.clone())).await.unwrap().unwrap();
    assert_eq!(released.status, TaskStatus::Working, "{released:?}");
    assert!(released.lease.is_none(), "{released:?}");
    drop(store);

    let mut again = spawn(&db, "127.0.0.1:0", &[]);
    let client = TasksClient::connect(options(&again.url)).await.unwrap();
    let handle = mcp_tasks_client::TaskHandle {
        task_id: long,
        tool: "long_running_report".into(),
        arguments: json!({}),
        status: TaskStatus::Working,
        status_message: None,
        hints: Default::default(),
    };
    let outcome = client.follow(&handle, &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed { .. }), "{outcome:?}");
    again.terminate();
    assert!(again.child.wait().unwrap().success());
}
