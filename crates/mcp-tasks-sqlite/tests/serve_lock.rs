//! The serving lock: while one store is open with `serve_lock`, a second one
//! on the same file is refused with `InUse` naming the file and the holder's
//! pid; stores without the lock (the operator commands) still open; closing
//! the first releases it.

use mcp_tasks_sqlite::{SqliteOptions, SqliteStore};
use mcp_tasks_store::StoreError;
use mcp_tasks_store::conformance::support::{at, create, get, new_task};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_serving_store_is_refused_while_inspection_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let serving = SqliteStore::open_with(&path, SqliteOptions::serving()).unwrap();
    let task = create(&serving, new_task("report", at(0))).await;

    let refused = SqliteStore::open_with(&path, SqliteOptions::serving()).unwrap_err();
    match &refused {
        StoreError::InUse { path: p, holder, .. } => {
            assert_eq!(p, &path.display().to_string());
            assert_eq!(*holder, Some(std::process::id()), "the holder's pid is read from the lock file");
        }
        other => panic!("expected InUse, got {other:?}"),
    }
    let text = refused.to_string();
    assert!(
        text.contains(&path.display().to_string())
            && text.contains(&format!("pid {}", std::process::id()))
            && text.contains("Stop that server"),
        "{text}"
    );

    let inspecting = SqliteStore::open(&path).expect("a store without the serving lock opens beside it");
    assert_eq!(get(&inspecting, &task.id).await, task);
    drop(inspecting);

    drop(serving);
    let next =
        SqliteStore::open_with(&path, SqliteOptions::serving()).expect("the lock is released when the serving store closes");
    assert_eq!(get(&next, &task.id).await, task);
}
