//! After SIGTERM and a clean exit, the `.db` file alone holds every task: the
//! server checkpoints the WAL into it at shutdown, so stopping the server and
//! copying the file is a complete backup.

use crate::serve_support;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_core::PollPolicy;
use mcp_tasks_store::{ListQuery, TaskStore};
use serde_json::json;
use serve_support::spawn;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_of_the_db_file_after_a_clean_stop_has_every_task() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut server = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s"]);
    let mut options = ClientOptions::new(&server.url);
    options.poll = PollPolicy { initial_ms: 5.0, max_ms: 100.0, ..PollPolicy::default() };
    let client = TasksClient::connect(options).await.unwrap();
    let mut created = BTreeSet::new();
    for n in 0..25 {
        match client.start("slow_compute", json!({"ms": 1, "label": format!("n{n}")}), &DeclineAll, &Silent).await.unwrap() {
            Started::Task(handle) => created.insert(handle.task_id),
            other => panic!("not a task: {other:?}"),
        };
    }

    let stopping = Instant::now();
    server.terminate();
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(stopping.elapsed() < Duration::from_secs(30));

    // Only the .db file, as a backup by copying would take it.
    let backup_dir = tempfile::tempdir().unwrap();
    let copy = backup_dir.path().join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    let store = mcp_tasks_sqlite::SqliteStore::open(&copy).unwrap();
    let found: BTreeSet<String> = store.list(ListQuery::default()).await.unwrap().into_iter().map(|r| r.id.0).collect();
    let missing: Vec<_> = created.difference(&found).collect();
    assert!(
        missing.is_empty(),
        "{} of {} created tasks are missing from the copied file: {missing:?}",
        missing.len(),
        created.len()
    );
}
