//! A second `mcp-tasks serve` on the same SQLite file is refused at start,
//! naming the file and the first server's pid, while the first keeps running
//! its task at attempt 1 (the second's start-up triage would otherwise take
//! every lease and run it again as attempt 2). `mcp-tasks tasks list` works
//! beside the running server.

use crate::serve_support;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TaskOutcome, TasksClient};
use mcp_tasks_core::TaskId;
use mcp_tasks_store::TaskStore;
use serde_json::json;
use serve_support::spawn;

fn options(url: &str) -> ClientOptions {
    let mut o = serve_support::task_client::fast_options(url, 11);
    o.give_up_after = Duration::from_secs(60);
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_the_same_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut first = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s"]);
    let client = TasksClient::connect(options(&first.url)).await.unwrap();
    let Started::Task(handle) = client
        .start("long_running_report", json!({"sections": 3, "ms": 700, "topic": "locks"}), &DeclineAll, &Silent)
        .await
        .unwrap()
    else {
        panic!("not a task")
    };
    // Its status message shows the first server's handler is running it.
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.get(&handle.task_id).await.unwrap().task.task.status_message.is_none() {
        assert!(Instant::now() < deadline, "the task never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let mut second = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["serve", "--tools", "demo", "--listen", "127.0.0.1:0", "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = second.try_wait().unwrap() {
            break exit;
        }
        if Instant::now() > deadline {
            second.kill().unwrap();
            second.wait().unwrap();
            panic!("the second server was not refused: it is still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::io::read_to_string(second.stderr.take().unwrap()).unwrap();
    assert!(!exit.success(), "{exit:?}: {stderr}");
    for needed in [
        db.display().to_string(),
        "another mcp-tasks server".to_owned(),
        format!("pid {}", first.child.id()),
        "Stop that server".to_owned(),
    ] {
        assert!(stderr.contains(&needed), "the refusal should say {needed:?}: {stderr}");
    }

    // Inspection works beside the running server.
    let listed = Command::new(env!("CARGO_BIN_EXE_mcp-tasks")).args(["tasks", "list", "--db"]).arg(&db).output().unwrap();
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    assert!(String::from_utf8_lossy(&listed.stdout).contains(&handle.task_id));

    // The first server finishes its task as attempt 1: nobody took it over.
    let outcome = client.follow(&handle, &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed { .. }), "{outcome:?}");
    let store = mcp_tasks_sqlite::SqliteStore::open(&db).unwrap();
    let record = store.get(&TaskId(handle.task_id.clone())).await.unwrap().unwrap();
    assert_eq!(record.attempt, 1, "the task was run again by the second server: {record:?}");
    drop(store);

    first.terminate();
    assert!(first.child.wait().unwrap().success());
}
