//! `mcp-tasks backup` beside a running server: the backup file alone holds
//! every task created so far, the server keeps serving, and an existing
//! destination is refused rather than overwritten.

use crate::serve_support;
use std::collections::BTreeSet;
use std::process::Command;

use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_store::{ListQuery, TaskStore};
use serde_json::json;
use serve_support::spawn;

fn backup(db: &std::path::Path, to: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-tasks")).args(["backup", "--db"]).arg(db).arg("--to").arg(to).output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_backup_holds_every_task() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut server = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s"]);
    let client = TasksClient::connect(ClientOptions::new(&server.url)).await.unwrap();
    let mut created = BTreeSet::new();
    for n in 0..10 {
        match client.start("slow_compute", json!({"ms": 1, "label": format!("n{n}")}), &DeclineAll, &Silent).await.unwrap() {
            Started::Task(handle) => created.insert(handle.task_id),
            other => panic!("not a task: {other:?}"),
        };
    }

    let backups = tempfile::tempdir().unwrap();
    let to = backups.path().join("backup.db");
    let out = backup(&db, &to);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let copy = mcp_tasks_sqlite::SqliteStore::open(&to).unwrap();
    let found: BTreeSet<String> = copy.list(ListQuery::default()).await.unwrap().into_iter().map(|r| r.id.0).collect();
    assert!(created.is_subset(&found), "missing from the backup: {:?}", created.difference(&found).collect::<Vec<_>>());
    drop(copy);

    let again = backup(&db, &to);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"), "{}", String::from_utf8_lossy(&again.stderr));

    // The server kept serving.
    let after = client.start("slow_compute", json!({"ms": 1}), &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(after, Started::Task(_)), "{after:?}");
    server.terminate();
    assert!(server.child.wait().unwrap().success());
}
