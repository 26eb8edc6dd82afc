//! `mcp-tasks tasks` and `mcp-tasks dlq` through the built binary on a real
//! SQLite file: tables, JSON, filters, exit codes, requeue and purge.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcp_tasks_core::{TaskError, TaskId, TaskStatus, Timestamp};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::{Change, Guard, GuardedUpdate, NewDeadLetter, NewTask, TaskStore};
use serde_json::{Value, json};

const T0: Timestamp = Timestamp::from_secs(1_785_234_600); // 2026-07-28T10:30:00Z

fn cli(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(args)
        .env("MCP_TASKS_DB", db)
        .output()
        .expect("run mcp-tasks")
}

fn ok(db: &Path, args: &[&str]) -> String {
    let out = cli(db, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn new_task(tool: &str, created: Timestamp) -> NewTask {
    NewTask {
        id: TaskId::random(),
        tool: tool.into(),
        arguments: json!({"n": 1}),
        principal: None,
        idempotency_key: None,
        max_attempts: 3,
        created_at: created,
        deadline_at: created.plus(std::time::Duration::from_secs(1800)),
        run_at: created,
        status_message: Some("queued".into()),
        quota: None,
    }
}

/// The seeded database's file (its directory lives as long as this does)
/// and its working, completed and poisoned tasks.
struct Seeded {
    _dir: tempfile::TempDir,
    db: PathBuf,
    working: TaskId,
    done: TaskId,
    poisoned: TaskId,
}

/// A fresh database with a working task, a completed one and a poisoned one.
fn seeded() -> Seeded {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let (working, done, poisoned) = seed(&db);
    Seeded { _dir: dir, db, working, done, poisoned }
}

fn seed(db: &Path) -> (TaskId, TaskId, TaskId) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store = SqliteStore::open(db).unwrap();
        let working = store.create(new_task("report", T0)).await.unwrap().record.id;
        let done = store.create(new_task("report", T0.plus(std::time::Duration::from_secs(1)))).await.unwrap().record;
        let end = |status, error: Option<TaskError>, dead_letter| Change {
            now: T0.plus(std::time::Duration::from_secs(5)),
            status: Some(status),
            terminal_at: Some(T0.plus(std::time::Duration::from_secs(5))),
            result: (status == TaskStatus::Completed).then(|| json!({"ok": true})),
            error,
            dead_letter,
            ..Change::default()
        };
        let outcomes = store.apply(vec![GuardedUpdate::change(Guard::read(&done), end(TaskStatus::Completed, None, None))]).await.unwrap();
        assert!(outcomes[0].applied());
        let poisoned = store.create(new_task("flaky", T0.plus(std::time::Duration::from_secs(2)))).await.unwrap().record;
        let error = TaskError::internal("connection reset by peer").with_data(json!({"class": "poison"}));
        let letter = NewDeadLetter { reason: "poison: attempts exhausted".into(), error: error.clone(), dead_at: T0.plus(std::time::Duration::from_secs(5)) };
        let outcomes = store
            .apply(vec![GuardedUpdate::change(Guard::read(&poisoned), end(TaskStatus::Failed, Some(error), Some(letter)))])
            .await
            .unwrap();
        assert!(outcomes[0].applied());
        (working, done.id, poisoned.id)
    })
}

#[test]
fn tasks_list_and_show() {
    let Seeded { _dir, db, working, done, poisoned } = seeded();

    let table = ok(&db, &["tasks", "list"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(lines[0].starts_with("ID") && lines[0].contains("STATUS") && lines[0].contains("ATTEMPT"), "{table}");
    // Columns are aligned: every row puts the status at the header's STATUS offset.
    let col = lines[0].find("STATUS").unwrap();
    for line in &lines[1..] {
        let status = line[col..].split_whitespace().next().unwrap();
        assert!(["working", "completed", "failed"].contains(&status), "{line}");
    }
    assert!(table.contains(working.as_str()) && table.contains("2026-07-28T10:30:00Z"), "{table}");

    let failed = ok(&db, &["tasks", "list", "--status", "failed"]);
    assert_eq!(failed.lines().count(), 2);
    assert!(failed.contains(poisoned.as_str()));
    let json: Value = serde_json::from_str(&ok(&db, &["tasks", "list", "--tool", "report", "--json"])).unwrap();
    let ids: Vec<&str> = json.as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&working.as_str()) && ids.contains(&done.as_str()));
    assert_eq!(ok(&db, &["tasks", "list", "--limit", "1"]).lines().count(), 2);

    let shown = ok(&db, &["tasks", "show", done.as_str()]);
    assert!(shown.contains("status:") && shown.contains("completed") && shown.contains(r#"{"ok":true}"#), "{shown}");
    let json: Value = serde_json::from_str(&ok(&db, &["tasks", "show", poisoned.as_str(), "--json"])).unwrap();
    assert_eq!(json["status"], "failed");
    assert_eq!(json["error"]["message"], "connection reset by peer");

    let missing = cli(&db, &["tasks", "show", "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("task nope not found"));
    let bad = cli(&db, &["tasks", "list", "--status", "running"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("running"));
}

#[test]
fn dlq_list_show_requeue_purge() {
    let Seeded { _dir, db, poisoned, .. } = seeded();

    let listed = ok(&db, &["dlq", "list"]);
    assert!(listed.starts_with("TASK") && listed.contains(poisoned.as_str()) && listed.contains("flaky"), "{listed}");
    let shown = ok(&db, &["dlq", "show", poisoned.as_str()]);
    assert!(shown.contains("poison: attempts exhausted") && shown.contains(r#"{"n":1}"#), "{shown}");

    let invalid = cli(&db, &["dlq", "requeue", poisoned.as_str(), "--max-attempts", "0"]);
    assert_eq!(invalid.status.code(), Some(2), "an invalid policy is refused before anything is requeued");
    assert!(String::from_utf8_lossy(&invalid.stderr).contains("max_attempts must be at least 1"));
    // The fresh budget is the configured one, read as `serve` reads it.
    let requeued = ok(&db, &["dlq", "requeue", poisoned.as_str(), "--max-attempts", "5"]);
    let new_id = requeued.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(requeued.starts_with(&format!("requeued {poisoned} as task ")), "{requeued}");
    let fresh: Value = serde_json::from_str(&ok(&db, &["tasks", "show", &new_id, "--json"])).unwrap();
    assert_eq!((fresh["status"].as_str(), fresh["attempt"].as_u64(), fresh["tool"].as_str()), (Some("working"), Some(1), Some("flaky")));
    assert_eq!(fresh["max_attempts"].as_u64(), Some(5), "{fresh}");
    assert_eq!(fresh["arguments"], json!({"n": 1}));

    assert_eq!(ok(&db, &["dlq", "list"]).trim(), "no dead letters", "requeued letters are hidden by default");
    assert!(ok(&db, &["dlq", "list", "--all"]).contains(&new_id));
    let again = cli(&db, &["dlq", "requeue", poisoned.as_str()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already requeued"));
    assert_eq!(cli(&db, &["dlq", "show", "nope"]).status.code(), Some(1));

    assert_eq!(ok(&db, &["dlq", "purge", "--before", "2000-01-01T00:00:00Z"]).trim(), "purged 0 dead letters");
    let bad = cli(&db, &["dlq", "purge", "--before", "yesterday"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("RFC 3339"));
    assert_eq!(cli(&db, &["dlq", "purge"]).status.code(), Some(2), "purge needs --all, IDs or --before");
    assert_eq!(ok(&db, &["dlq", "purge", poisoned.as_str()]).trim(), "purged 1 dead letter");
    assert_eq!(ok(&db, &["dlq", "purge", "--all"]).trim(), "purged 0 dead letters");
}

#[test]
fn a_missing_database_is_an_error_not_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo.db");
    let out = cli(&db, &["tasks", "list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no task database at"));
    assert!(!db.exists(), "nothing was created");
    let flag = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["dlq", "list", "--db"])
        .arg(&db)
        .env_remove("MCP_TASKS_DB")
        .output()
        .unwrap();
    assert_eq!(flag.status.code(), Some(2));
}
