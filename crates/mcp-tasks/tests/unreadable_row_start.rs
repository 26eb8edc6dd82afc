//! A server whose database holds a leased task with unreadable stored JSON
//! (left by a dead process, damaged behind the store's back) still starts:
//! start-up triage fails that one task as unreadable and resumes the rest,
//! and the server serves new calls.

use crate::serve_support;
use std::time::Duration;

use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TaskHandle, TaskOutcome, TasksClient};
use mcp_tasks_core::{PollPolicy, TaskId, TaskStatus, Timestamp};
use mcp_tasks_store::{ClaimParams, NewTask, TaskStore};
use serde_json::json;
use serve_support::spawn;

fn new_task(tool: &str, arguments: serde_json::Value, now: Timestamp) -> NewTask {
    NewTask {
        id: TaskId::random(),
        tool: tool.into(),
        arguments,
        principal: None,
        idempotency_key: None,
        trace_parent: None,
        max_attempts: 3,
        created_at: now,
        deadline_at: now.plus(Duration::from_secs(1800)),
        run_at: now,
        status_message: None,
        quota: None,
        lease: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_a_leased_unreadable_row_starts_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let now = mcp_tasks_core::Clock::now(&mcp_tasks_core::SystemClock);
    let (good, bad) = {
        let store = mcp_tasks_sqlite::SqliteStore::open(&db).unwrap();
        let good = store.create(new_task("slow_compute", json!({"ms": 1, "label": "good"}), now)).await.unwrap().record;
        let bad = store.create(new_task("slow_compute", json!({"ms": 1, "label": "bad"}), now)).await.unwrap().record;
        // A dead process's executor holds both.
        let claimed = store
            .claim(ClaimParams {
                owner: "executor-dead".into(),
                now,
                lease_expires_at: now.plus(Duration::from_secs(3600)),
                limit: 10,
                tools: None,
            })
            .await
            .unwrap();
        assert_eq!(claimed.len(), 2);
        (good.id, bad.id)
    };
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE tasks SET arguments = '{not json' WHERE id = ?1", [bad.as_str()])
        .unwrap();

    let mut server = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s"]);
    let mut options = ClientOptions::new(&server.url);
    options.poll = PollPolicy { initial_ms: 5.0, max_ms: 100.0, ..PollPolicy::default() };
    options.give_up_after = Duration::from_secs(60);
    let client = TasksClient::connect(options).await.unwrap();

    // The good task the dead process held is resumed and finishes.
    let resumed = TaskHandle {
        task_id: good.0.clone(),
        tool: "slow_compute".into(),
        arguments: json!({}),
        status: TaskStatus::Working,
        status_message: None,
        hints: Default::default(),
    };
    let outcome = client.follow(&resumed, &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed { .. }), "{outcome:?}");
    // New calls are served.
    let Started::Task(fresh) = client.start("slow_compute", json!({"ms": 1}), &DeclineAll, &Silent).await.unwrap() else {
        panic!("not a task")
    };
    let outcome = client.follow(&fresh, &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(outcome, TaskOutcome::Completed { .. }), "{outcome:?}");

    // The unreadable one ended failed, saying why; `tasks list` shows it.
    let (status, error): (String, String) = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT status, error FROM tasks WHERE id = ?1", [bad.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(status, "failed");
    assert!(error.contains("could not be read") && error.contains("-32603"), "{error}");
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["tasks", "list", "--status", "failed", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    assert!(String::from_utf8_lossy(&listed.stdout).contains(bad.as_str()), "{}", String::from_utf8_lossy(&listed.stdout));

    server.terminate();
    assert!(server.child.wait().unwrap().success());
}
