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
    Command::new(env!("CARGO_BIN_EXE_mcp-tasks")).args(args).env("MCP_TASKS_DB", db).output().expect("run mcp-tasks")
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
        trace_parent: None,
        max_attempts: 3,
        created_at: created,
        deadline_at: created.plus(std::time::Duration::from_secs(1800)),
        run_at: created,
        status_message: Some("queued".into()),
        quota: None,
        lease: None,
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
        let outcomes = store
            .apply(vec![GuardedUpdate::change(Guard::read(&done), end(TaskStatus::Completed, None, None))])
            .await
            .unwrap();
        assert!(outcomes[0].applied());
        let poisoned = store.create(new_task("flaky", T0.plus(std::time::Duration::from_secs(2)))).await.unwrap().record;
        let error = TaskError::internal("connection reset by peer").with_data(json!({"class": "poison"}));
        let letter = NewDeadLetter {
            reason: "poison: attempts exhausted".into(),
            error: error.clone(),
            dead_at: T0.plus(std::time::Duration::from_secs(5)),
        };
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
    assert_eq!(
        (fresh["status"].as_str(), fresh["attempt"].as_u64(), fresh["tool"].as_str()),
        (Some("working"), Some(1), Some("flaky"))
    );
    assert_eq!(fresh["max_attempts"].as_u64(), Some(5), "{fresh}");
    assert_eq!(fresh["arguments"], json!({"n": 1}));

    assert_eq!(ok(&db, &["dlq", "list"]).trim(), "no dead letters", "requeued letters are hidden by default");
    assert!(ok(&db, &["dlq", "list", "--all"]).contains(&new_id));
    let again = cli(&db, &["dlq", "requeue", poisoned.as_str()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already requeued"));
    assert_eq!(cli(&db, &["dlq", "show", "nope"]).status.code(), Some(1));

    assert_eq!(ok(&db, &["dlq", "purge", "--before", "2000-01-01T00:00:00Z"]).trim(), "purged 0 dead letters");
    let bad = cli(&db, &["dlq", "purge", "--before", "last tuesday"]);
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

/// A dead letter for a fresh task of `tool`, dead at `dead_at`.
fn dead_letter(db: &Path, tool: &str, dead_at: Timestamp) -> TaskId {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store = SqliteStore::open(db).unwrap();
        let task = store.create(new_task(tool, dead_at)).await.unwrap().record;
        let error = TaskError::internal("boom");
        let change = Change {
            now: dead_at,
            status: Some(TaskStatus::Failed),
            terminal_at: Some(dead_at),
            error: Some(error.clone()),
            dead_letter: Some(NewDeadLetter { reason: "poison".into(), error, dead_at }),
            ..Change::default()
        };
        let outcomes = store.apply(vec![GuardedUpdate::change(Guard::read(&task), change)]).await.unwrap();
        assert!(outcomes[0].applied());
        task.id
    })
}

#[test]
fn purge_before_takes_ages_and_days_and_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let ago = |minutes: i64| Timestamp::from_millis(now_ms - minutes * 60_000);
    let three_days = dead_letter(&db, "old", ago(3 * 24 * 60));
    let three_hours = dead_letter(&db, "recent", ago(3 * 60));
    let one_minute = dead_letter(&db, "new", ago(1));

    assert_eq!(ok(&db, &["dlq", "purge", "--before", "yesterday"]).trim(), "purged 1 dead letter");
    let left = ok(&db, &["dlq", "list"]);
    assert!(!left.contains(three_days.as_str()) && left.contains(three_hours.as_str()), "{left}");
    assert_eq!(ok(&db, &["dlq", "purge", "--before", "2h"]).trim(), "purged 1 dead letter");
    let left = ok(&db, &["dlq", "list"]);
    assert!(!left.contains(three_hours.as_str()) && left.contains(one_minute.as_str()), "{left}");

    let bad = cli(&db, &["dlq", "purge", "--before", "the day before"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    let first = stderr.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "error: invalid value 'the day before' for '--before <WHEN>': expected an RFC 3339 instant \
         (2026-07-28T10:30:00Z), an age such as 2h or 30m (that long ago), or today or yesterday (midnight UTC)"
    );
    assert_eq!(stderr.matches("RFC 3339").count(), 1, "said once: {stderr}");
    assert!(ok(&db, &["dlq", "list"]).contains(one_minute.as_str()), "a bad flag purges nothing");
}

#[test]
fn unknown_ids_are_printed_plainly() {
    let Seeded { _dir, db, .. } = seeded();
    for (args, line) in [
        (&["tasks", "show", "NOPE"][..], format!("error: task NOPE not found in {}", db.display())),
        (&["dlq", "show", "NOPE"][..], format!("error: no dead letter for task NOPE in {}", db.display())),
        (&["dlq", "requeue", "NOPE"][..], format!("error: no dead letter for task NOPE in {}", db.display())),
    ] {
        let out = cli(&db, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end(), line, "{args:?}");
    }
}
