//! The operator's CLI through the built binary on a real SQLite store holding
//! tasks in every state (working, running under a lease, input_required,
//! overdue, completed, failed, cancelled, dead-lettered): list filters and
//! the PRINCIPAL column, `show` with every attempt, id prefixes, `cancel`,
//! bulk `dlq requeue`/`purge` with `--dry-run` (the whole store compared
//! before and after), `reap --dry-run`, time parsing errors, and `tools URL`
//! against a real served instance.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use mcp_tasks_core::{FailureClass, Lease, TaskError, TaskId, TaskStatus, Timestamp};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::{AttemptEnd, AttemptOutcome, Change, Guard, GuardedUpdate, NewDeadLetter, NewTask, TaskStore};
use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use crate::serve_support;

fn cli(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(args)
        .env("MCP_TASKS_DB", db)
        .env_remove("MCP_TASKS_DATABASE_URL")
        .output()
        .expect("run mcp-tasks")
}

fn ok(db: &Path, args: &[&str]) -> String {
    let out = cli(db, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Now, as the CLI's clock reads it.
fn now() -> Timestamp {
    Timestamp::from_millis(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64)
}

fn minutes_ago(m: u64) -> Timestamp {
    now().minus(Duration::from_secs(m * 60))
}

fn minutes_ahead(m: u64) -> Timestamp {
    now().plus(Duration::from_secs(m * 60))
}

/// Every row of every table, as text: two dumps are equal only if nothing changed.
fn dump(db: &Path) -> Vec<String> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut out = Vec::new();
    for table in ["tasks", "dead_letters", "task_attempts", "principal_usage"] {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY 1")).unwrap();
        let columns = stmt.column_count();
        let rows = stmt
            .query_map([], |row| {
                let cells: Vec<String> =
                    (0..columns).map(|i| format!("{:?}", row.get::<_, rusqlite::types::Value>(i).unwrap())).collect();
                Ok(format!("{table}: {}", cells.join(" | ")))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

/// The seeded store's file (its directory lives as long as this does).
struct Store {
    _dir: tempfile::TempDir,
    db: PathBuf,
}

fn task(id: &str, tool: &str, principal: Option<&str>, created: Timestamp) -> NewTask {
    NewTask {
        id: TaskId::from(id),
        tool: tool.into(),
        arguments: json!({"id": id}),
        principal: principal.map(str::to_owned),
        idempotency_key: None,
        max_attempts: 3,
        created_at: created,
        deadline_at: minutes_ahead(60),
        run_at: created,
        status_message: None,
        quota: None,
        lease: None,
        trace_parent: None,
    }
}

fn ended(attempt: u32, outcome: AttemptOutcome, class: Option<FailureClass>, error: Option<&str>) -> AttemptEnd {
    AttemptEnd {
        attempt,
        started_at: Some(minutes_ago(30)),
        owner: Some(format!("exec-1/{attempt}")),
        outcome,
        class,
        error: error.map(TaskError::internal),
        message: None,
    }
}

async fn apply(store: &SqliteStore, id: &str, change: Change) {
    let outcomes = store.apply(vec![GuardedUpdate::change(Guard::id(TaskId::from(id)), change)]).await.unwrap();
    assert!(outcomes[0].applied(), "seeding {id}");
}

fn terminal(status: TaskStatus, at: Timestamp, expires: Timestamp) -> Change {
    Change {
        now: at,
        status: Some(status),
        status_message: Some(Some(status.to_string())),
        terminal_at: Some(at),
        expires_at: Some(Some(expires)),
        run_at: Some(None),
        ..Change::default()
    }
}

/// A dead letter for task `id` of `tool`, dead `minutes` ago, its error of `class`.
async fn dead(store: &SqliteStore, id: &str, tool: &str, minutes: u64, class: FailureClass) {
    store.create(task(id, tool, None, minutes_ago(minutes + 5))).await.unwrap();
    let error = TaskError::internal(format!("{tool} broke")).with_data(json!({"class": class.to_string()}));
    let letter = NewDeadLetter { reason: format!("{class}: gave up"), error: error.clone(), dead_at: minutes_ago(minutes) };
    let change = Change {
        error: Some(error),
        dead_letter: Some(letter),
        attempt_end: Some(ended(1, AttemptOutcome::Failed, Some(class), Some("broke"))),
        ..terminal(TaskStatus::Failed, minutes_ago(minutes), minutes_ahead(600))
    };
    apply(store, id, change).await;
}

/// A store with a task in every state; ids chosen so prefixes can be tested.
fn seeded() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store = SqliteStore::open(&db).unwrap();
        let create = |new: NewTask| store.create(new);
        // Queued, polled just now: the reaper leaves it alone.
        create(task("a1b2c3-queued", "report", Some("alice"), minutes_ago(180))).await.unwrap();
        // Running under a live lease, on its second attempt.
        create(task("a1b2c4-running", "report", Some("alice"), minutes_ago(30))).await.unwrap();
        let retried = Change {
            now: minutes_ago(20),
            attempt: Some(2),
            status_message: Some(Some("retrying".into())),
            attempt_end: Some(ended(1, AttemptOutcome::Failed, Some(FailureClass::Transient), Some("upstream 503"))),
            ..Change::default()
        };
        apply(&store, "a1b2c4-running", retried).await;
        let lease = Lease { owner: "exec-9/4".into(), expires_at: minutes_ahead(24 * 60) };
        apply(&store, "a1b2c4-running", Change { now: minutes_ago(10), lease: Some(Some(lease)), ..Change::default() })
            .await;
        // Waiting for input; its client stopped polling an hour ago: an orphan.
        create(task("b7-asking", "ask_user", Some("bob"), minutes_ago(120))).await.unwrap();
        let asking = Change {
            now: minutes_ago(110),
            status: Some(TaskStatus::InputRequired),
            input_requests: Some([("name".to_owned(), json!({"method": "elicitation/create"}))].into()),
            ..Change::default()
        };
        apply(&store, "b7-asking", asking).await;
        // Past its deadline.
        let mut overdue = task("c3-overdue", "slow", None, minutes_ago(40));
        overdue.deadline_at = minutes_ago(1);
        create(overdue).await.unwrap();
        // Completed yesterday after a retry; its retention is over.
        create(task("d4-done", "report", Some("alice"), minutes_ago(26 * 60))).await.unwrap();
        let retry = Change {
            now: minutes_ago(26 * 60 - 1),
            attempt: Some(2),
            attempt_end: Some(ended(
                1,
                AttemptOutcome::Failed,
                Some(FailureClass::Transient),
                Some("timeout talking to db"),
            )),
            ..Change::default()
        };
        apply(&store, "d4-done", retry).await;
        let done = Change {
            result: Some(json!({"ok": true})),
            attempt_end: Some(ended(2, AttemptOutcome::Completed, None, None)),
            ..terminal(TaskStatus::Completed, minutes_ago(26 * 60 - 2), minutes_ago(1))
        };
        apply(&store, "d4-done", done).await;
        // Failed for good, and cancelled: both still retained.
        create(task("e5-failed", "report", None, minutes_ago(300))).await.unwrap();
        let failed = Change {
            error: Some(TaskError::internal("E_BADSTATE")),
            attempt_end: Some(ended(1, AttemptOutcome::Failed, Some(FailureClass::Permanent), Some("E_BADSTATE"))),
            ..terminal(TaskStatus::Failed, minutes_ago(299), minutes_ahead(60))
        };
        apply(&store, "e5-failed", failed).await;
        create(task("f6-cancelled", "report", Some("bob"), minutes_ago(60))).await.unwrap();
        apply(&store, "f6-cancelled", terminal(TaskStatus::Cancelled, minutes_ago(59), minutes_ahead(60))).await;
        // Dead letters.
        dead(&store, "9a-flaky-old", "flaky", 180, FailureClass::Poison).await;
        dead(&store, "9b-flaky-new", "flaky", 10, FailureClass::Poison).await;
        dead(&store, "9c-report-old", "report", 180, FailureClass::Poison).await;
        dead(&store, "9d-report-perm", "report", 120, FailureClass::Permanent).await;
        let ids: Vec<TaskId> = ["a1b2c3-queued", "a1b2c4-running", "c3-overdue"].map(TaskId::from).into();
        store.record_polls(&ids.into_iter().map(|id| (id, now())).collect::<Vec<_>>()).await.unwrap();
        store.record_polls(&[(TaskId::from("b7-asking"), minutes_ago(60))]).await.unwrap();
    });
    Store { _dir: dir, db }
}

/// The ids in a table's first column (the header skipped).
fn first_column(table: &str) -> Vec<String> {
    table.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(str::to_owned).collect()
}

#[test]
fn list_filters_by_principal_and_age_and_shows_the_principal() {
    let Store { _dir, db } = seeded();
    let all = ok(&db, &["tasks", "list", "--limit", "100"]);
    let header = all.lines().next().unwrap();
    assert!(header.contains("PRINCIPAL"), "{all}");
    let col = header.find("PRINCIPAL").unwrap();
    let running = all.lines().find(|l| l.starts_with("a1b2c4-running")).unwrap();
    assert_eq!(running[col..].split_whitespace().next(), Some("alice"), "{all}");
    let overdue = all.lines().find(|l| l.starts_with("c3-overdue")).unwrap();
    assert_eq!(overdue[col..].split_whitespace().next(), Some("-"), "{all}");
    assert_eq!(first_column(&all).len(), 11, "seven tasks and four dead-lettered ones: {all}");

    let alice = first_column(&ok(&db, &["tasks", "list", "--principal", "alice"]));
    assert_eq!(alice, ["a1b2c4-running", "a1b2c3-queued", "d4-done"], "newest first");
    let recent = first_column(&ok(&db, &["tasks", "list", "--created-since", "3h", "--principal", "bob"]));
    assert_eq!(recent, ["f6-cancelled", "b7-asking"], "since 3h ago, bob's only");
    let old = first_column(&ok(&db, &["tasks", "list", "--created-before", "yesterday"]));
    assert!(old.is_empty() || old == ["d4-done"], "{old:?}");
    let before = first_column(&ok(&db, &["tasks", "list", "--created-before", "12h"]));
    assert_eq!(before, ["d4-done"]);
    let window =
        ["tasks", "list", "--created-since", "4h", "--created-before", "90m", "--tool", "report", "--principal", "alice"];
    let window = first_column(&ok(&db, &window));
    assert_eq!(window, ["a1b2c3-queued"]);
    let json: Value = serde_json::from_str(&ok(&db, &["tasks", "list", "--principal", "bob", "--json"])).unwrap();
    assert!(json.as_array().unwrap().iter().all(|t| t["principal"] == "bob"), "{json}");
    assert_eq!(ok(&db, &["tasks", "list", "--principal", "carol"]).trim(), "no tasks");
}

#[test]
fn times_that_do_not_parse_name_the_flag_and_the_forms() {
    let Store { _dir, db } = seeded();
    let before = dump(&db);
    for (flag, args) in [
        ("--created-since", vec!["tasks", "list", "--created-since", "soon"]),
        ("--created-before", vec!["tasks", "list", "--created-before", "2026-13-01"]),
        ("--before", vec!["dlq", "requeue", "--before", "last week", "--dry-run"]),
        ("--since", vec!["dlq", "purge", "--since", "tomorrow"]),
    ] {
        let out = cli(&db, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let first = stderr(&out).lines().next().unwrap_or_default().to_owned();
        assert!(first.starts_with(&format!("error: invalid value '{}' for '{flag} <WHEN>'", args[3])), "{first}");
        assert!(first.contains("RFC 3339") && first.contains("2h") && first.contains("yesterday"), "{first}");
    }
    let class = cli(&db, &["dlq", "purge", "--class", "flaky"]);
    assert_eq!(class.status.code(), Some(2));
    assert!(stderr(&class).contains("'--class <CLASS>': expected transient, permanent or poison"), "{}", stderr(&class));
    assert_eq!(dump(&db), before, "a bad flag changes nothing");
}

#[test]
fn show_lists_every_attempt_with_its_error_and_class() {
    let Store { _dir, db } = seeded();
    let shown = ok(&db, &["tasks", "show", "d4-done"]);
    let attempts = shown.split("attempts:\n").nth(1).unwrap_or_else(|| panic!("{shown}"));
    let rows: Vec<&str> = attempts.lines().collect();
    assert!(rows[0].starts_with("ATTEMPT") && rows[0].contains("CLASS") && rows[0].contains("ERROR"), "{shown}");
    assert_eq!(rows.len(), 3, "{shown}");
    assert!(rows[1].starts_with('1') && rows[1].contains("failed") && rows[1].contains("transient"), "{shown}");
    assert!(rows[1].contains("timeout talking to db") && rows[1].contains("exec-1/1"), "{shown}");
    assert!(rows[2].starts_with('2') && rows[2].contains("completed"), "{shown}");

    let json: Value = serde_json::from_str(&ok(&db, &["tasks", "show", "e5-failed", "--json"])).unwrap();
    assert_eq!(json["status"], "failed", "the record's fields stay where they were");
    let attempts = json["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!((attempts[0]["outcome"].as_str(), attempts[0]["class"].as_str()), (Some("failed"), Some("permanent")));
    assert_eq!(attempts[0]["error"]["message"], "E_BADSTATE");
    let queued = ok(&db, &["tasks", "show", "a1b2c3-queued"]);
    assert!(queued.contains("attempts: none ended yet"), "{queued}");
}

#[test]
fn id_prefixes_resolve_when_unambiguous() {
    let Store { _dir, db } = seeded();
    let shown = ok(&db, &["tasks", "show", "c3"]);
    assert!(shown.starts_with("id:") && shown.lines().next().unwrap().ends_with("c3-overdue"), "{shown}");
    assert!(ok(&db, &["tasks", "show", "a1b2c4"]).contains("a1b2c4-running"));

    let ambiguous = cli(&db, &["tasks", "show", "a1b2c"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    let line = stderr(&ambiguous);
    assert_eq!(
        line.trim_end(),
        "error: task id prefix a1b2c is ambiguous: it matches a1b2c4-running, a1b2c3-queued",
        "candidates, newest first"
    );
    let none = cli(&db, &["tasks", "show", "zz"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(stderr(&none).contains("task zz not found"), "{}", stderr(&none));

    assert!(ok(&db, &["dlq", "show", "9d"]).contains("9d-report-perm"));
    let letters = cli(&db, &["dlq", "show", "9"]);
    assert_eq!(letters.status.code(), Some(2));
    assert!(stderr(&letters).contains("dead letter id prefix 9 is ambiguous"), "{}", stderr(&letters));
    let none = cli(&db, &["tasks", "cancel", "nope"]);
    assert_eq!(none.status.code(), Some(1));
}

#[test]
fn cancel_ends_a_queued_task_requests_a_running_one_and_refuses_an_ended_one() {
    let Store { _dir, db } = seeded();
    assert_eq!(ok(&db, &["tasks", "cancel", "a1b2c3"]).trim(), "cancelled task a1b2c3-queued");
    let queued: Value = serde_json::from_str(&ok(&db, &["tasks", "show", "a1b2c3-queued", "--json"])).unwrap();
    assert_eq!(queued["status"], "cancelled");
    assert_eq!(queued["attempts"][0]["outcome"], "cancelled", "the cancel ended attempt 1: {queued}");

    let requested = ok(&db, &["tasks", "cancel", "a1b2c4-running"]);
    assert_eq!(requested.trim(), "cancel requested for task a1b2c4-running: exec-9/4 holds it and will stop it");
    let running: Value = serde_json::from_str(&ok(&db, &["tasks", "show", "a1b2c4-running", "--json"])).unwrap();
    assert_eq!((running["status"].as_str(), running["cancel_requested"].as_bool()), (Some("working"), Some(true)));
    assert_eq!(running["attempts"].as_array().unwrap().len(), 1, "the running attempt has not ended");

    let before = dump(&db);
    let again = cli(&db, &["tasks", "cancel", "a1b2c4-running"]);
    assert_eq!(again.status.code(), Some(0), "a second request is acknowledged and changes nothing");
    for id in ["d4-done", "f6-cancelled", "a1b2c3-queued"] {
        let ended = cli(&db, &["tasks", "cancel", id]);
        assert_eq!(ended.status.code(), Some(3), "{id}");
        assert!(stderr(&ended).contains(&format!("task {id} already ended")), "{}", stderr(&ended));
    }
    assert_eq!(dump(&db), before, "nothing changed");
}

#[test]
fn bulk_requeue_touches_exactly_its_filter_and_a_dry_run_nothing() {
    let Store { _dir, db } = seeded();
    let before = dump(&db);
    let dry = ok(&db, &["dlq", "requeue", "--tool", "flaky", "--before", "1h", "--dry-run"]);
    assert!(dry.starts_with("dry run: would requeue 1 dead letter\n"), "{dry}");
    assert_eq!(first_column(dry.split_once('\n').unwrap().1), ["9a-flaky-old"], "{dry}");
    assert_eq!(dump(&db), before, "a dry run changes nothing");
    let json: Value =
        serde_json::from_str(&ok(&db, &["dlq", "requeue", "--tool", "flaky", "--before", "1h", "--dry-run", "--json"]))
            .unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert_eq!(dump(&db), before);

    let done = ok(&db, &["dlq", "requeue", "--tool", "flaky", "--before", "1h"]);
    assert!(done.starts_with("requeued 9a-flaky-old as task ") && done.ends_with("requeued 1 dead letter\n"), "{done}");
    let after = dump(&db);
    let gone: Vec<&String> = before.iter().filter(|row| !after.contains(row)).collect();
    let new: Vec<&String> = after.iter().filter(|row| !before.contains(row)).collect();
    // Changed: the one letter (now requeued), and the anonymous principal's usage; added: one task.
    assert_eq!(gone.len(), 2, "{gone:#?}");
    assert!(gone.iter().any(|r| r.starts_with("dead_letters:") && r.contains("9a-flaky-old")), "{gone:#?}");
    assert!(gone.iter().any(|r| r.starts_with("principal_usage:")), "{gone:#?}");
    assert_eq!(new.iter().filter(|r| r.starts_with("tasks:")).count(), 1, "{new:#?}");
    assert!(new.iter().any(|r| r.starts_with("dead_letters:") && r.contains("9a-flaky-old")), "{new:#?}");

    let class = ok(&db, &["dlq", "requeue", "--class", "permanent", "--dry-run"]);
    assert_eq!(first_column(class.split_once('\n').unwrap().1), ["9d-report-perm"], "{class}");
    let text = ok(&db, &["dlq", "requeue", "--error-contains", "report broke", "--dry-run"]);
    assert_eq!(first_column(text.split_once('\n').unwrap().1), ["9d-report-perm", "9c-report-old"], "{text}");
    let nothing = cli(&db, &["dlq", "requeue"]);
    assert_eq!(nothing.status.code(), Some(2), "requeue needs an id, a filter or --all");
    let both = cli(&db, &["dlq", "requeue", "9b-flaky-new", "--all"]);
    assert_eq!(both.status.code(), Some(2), "an id and a filter conflict");
}

#[test]
fn bulk_purge_by_class_with_a_dry_run_first() {
    let Store { _dir, db } = seeded();
    let before = dump(&db);
    let dry = ok(&db, &["dlq", "purge", "--class", "poison", "--since", "1h", "--dry-run"]);
    assert!(dry.starts_with("dry run: would purge 1 dead letter\n"), "{dry}");
    assert_eq!(first_column(dry.split_once('\n').unwrap().1), ["9b-flaky-new"]);
    assert_eq!(dump(&db), before, "a dry run changes nothing");
    assert_eq!(ok(&db, &["dlq", "purge", "--class", "poison", "--since", "1h"]).trim(), "purged 1 dead letter");
    let left = first_column(&ok(&db, &["dlq", "list", "--all"]));
    assert_eq!(left, ["9d-report-perm", "9c-report-old", "9a-flaky-old"], "the others stay, newest first");
}

#[test]
fn reap_dry_run_says_what_the_next_sweep_would_do_and_changes_nothing() {
    let Store { _dir, db } = seeded();
    let before = dump(&db);
    let plan = ok(&db, &["reap", "--dry-run"]);
    assert!(plan.starts_with("dry run: the next sweep would act on 3 tasks\n"), "{plan}");
    let rows: Vec<Vec<&str>> = plan.lines().skip(2).map(|l| l.split_whitespace().take(5).collect()).collect();
    assert_eq!(
        rows,
        vec![
            vec!["timeout", "c3-overdue", "working", "slow", "fail"],
            vec!["orphan", "b7-asking", "input_required", "ask_user", "cancel"],
            vec!["expiry", "d4-done", "completed", "report", "delete"],
        ],
        "{plan}"
    );
    assert_eq!(dump(&db), before, "a dry run changes nothing");
    let json: Value = serde_json::from_str(&ok(&db, &["reap", "--dry-run", "--json"])).unwrap();
    assert_eq!(json[1]["detail"].as_str().map(|d| d.contains("orphan window")), Some(true), "{json}");

    assert_eq!(ok(&db, &["reap"]).trim(), "reaped: 1 timed out, 1 orphaned, 1 expired");
    assert_eq!(ok(&db, &["reap", "--dry-run"]).trim(), "dry run: the next sweep would change nothing");
    let overdue: Value = serde_json::from_str(&ok(&db, &["tasks", "show", "c3-overdue", "--json"])).unwrap();
    assert_eq!(overdue["attempts"][0]["outcome"], "timed_out", "{overdue}");
    assert_eq!(cli(&db, &["tasks", "show", "d4-done"]).status.code(), Some(1), "expired and deleted");
}

#[test]
fn tools_lists_a_served_instance_with_task_support() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
    let mut server = serve_support::spawn(&db, "127.0.0.1:0", &[]);
    let table = ok(&db, &["tools", &server.url]);
    let json: Value = serde_json::from_str(&ok(&db, &["tools", &server.url, "--json"])).unwrap();
    let bad = cli(&db, &["tools", "not-a-url"]);
    server.child.kill().unwrap();
    server.child.wait().unwrap();

    let header = table.lines().next().unwrap();
    assert!(header.starts_with("NAME") && header.contains("TASK SUPPORT") && header.contains("DESCRIPTION"), "{table}");
    let support = |name: &str| {
        json.as_array().unwrap().iter().find(|t| t["name"] == name).map(|t| t["taskSupport"].as_str().unwrap().to_owned())
    };
    assert_eq!(support("long_running_report").as_deref(), Some("required"), "{json}");
    assert_eq!(support("slow_compute").as_deref(), Some("optional"), "{json}");
    assert_eq!(support("greet").as_deref(), Some("forbidden"), "{json}");
    assert_eq!(support("test_tool_with_task").as_deref(), Some("optional"), "a front of a task tool: {json}");
    let row = table.lines().find(|l| l.starts_with("slow_compute")).unwrap();
    assert!(row.contains("optional") && row.contains("Sleeps for"), "{table}");
    assert_eq!(bad.status.code(), Some(2));
}

/// Polls `check` every 50 ms until it returns something, for at most `within`.
fn eventually<T>(within: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + within;
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn cancel_reaches_the_serving_instance_running_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
    let policy = dir.path().join("policy.toml");
    // A short lease: the server renews (and reads the cancel flag) every 500 ms.
    std::fs::write(&policy, "lease_duration = \"1500ms\"\n").unwrap();
    let mut server = serve_support::spawn(&db, "127.0.0.1:0", &["--config", policy.to_str().unwrap()]);
    let mut call = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["call", &server.url, "slow_compute", "--args", r#"{"seconds": 120}"#, "--book"])
        .arg(dir.path().join("book.db"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();

    let id = eventually(Duration::from_secs(30), "the task to run under a lease", || {
        let listed: Value = serde_json::from_str(&ok(&db, &["tasks", "list", "--tool", "slow_compute", "--json"])).ok()?;
        let task = listed.as_array()?.first()?.clone();
        (!task["lease"].is_null()).then(|| task["id"].as_str().unwrap().to_owned())
    });
    let requested = ok(&db, &["tasks", "cancel", &id[..8]]);
    assert!(requested.starts_with(&format!("cancel requested for task {id}: ")), "{requested}");

    let status = eventually(Duration::from_secs(30), "the call to end", || call.try_wait().unwrap());
    let shown: Value = serde_json::from_str(&ok(&db, &["tasks", "show", &id, "--json"])).unwrap();
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    assert_eq!(status.code(), Some(4), "the client saw its task end cancelled");
    assert_eq!(shown["status"], "cancelled", "{shown}");
    let attempt = &shown["attempts"][0];
    assert_eq!((attempt["outcome"].as_str(), attempt["attempt"].as_u64()), (Some("cancelled"), Some(1)), "{shown}");
    assert!(attempt["owner"].as_str().is_some() && attempt["started_at"].is_number(), "the server's own attempt: {shown}");
}
