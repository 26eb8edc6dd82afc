//! Crash test: every acknowledged write survives SIGKILL.
//!
//! The test binary runs itself again as a child (switched by
//! `MCP_TASKS_CRASH_CHILD=<db path>`). The child opens the database, drives
//! tasks into every state (working, leased, input_required, completed with a
//! result, failed with an error and a dead letter, cancelled) and keeps 8
//! concurrent creators going; after each write returns it prints the stored
//! record as one `ACK <json>` line. The parent reads acknowledgements, kills
//! the child with SIGKILL mid-stream, reopens the file and checks every
//! acknowledged record is there exactly as acknowledged.
//!
//! SIGKILL kills the process, not the machine: this proves an acknowledged
//! write was committed to the file; power-loss safety rests on
//! `synchronous = FULL` (one fsync per group commit).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_tasks_core::{TaskError, TaskId, TaskRecord, TaskStatus};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::conformance::support::{at, change, claim_params, create, new_task};
use mcp_tasks_store::{Change, NewDeadLetter, TaskStore};
use serde_json::json;

const CHILD_ENV: &str = "MCP_TASKS_CRASH_CHILD";
/// Acknowledgements the parent waits for before it kills the child.
const KILL_AFTER_ACKS: usize = 400;

fn main() {
    match std::env::var_os(CHILD_ENV) {
        Some(path) => child(std::path::PathBuf::from(path)),
        None => {
            parent();
            println!("test crash::acknowledged_writes_survive_sigkill ... ok");
        }
    }
}

fn ack(record: &TaskRecord) {
    let line = format!("ACK {}\n", serde_json::to_string(record).expect("record serialises"));
    let mut out = std::io::stdout().lock();
    // A closed pipe means the parent is done with us.
    if out.write_all(line.as_bytes()).and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

fn child(path: std::path::PathBuf) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async move {
        let store: Arc<dyn TaskStore> = Arc::new(SqliteStore::open(&path).expect("child opens the database"));
        let s = &*store;

        let working = create(s, new_task("report", at(0))).await;
        ack(&working);

        let leased = create(s, new_task("lease_me", at(0))).await;
        ack(&leased);
        let params =
            mcp_tasks_store::ClaimParams { tools: Some(vec!["lease_me".into()]), ..claim_params("exec-1", at(1), 1) };
        for claimed in s.claim(params).await.expect("claim") {
            ack(&claimed);
        }

        let asks = create(s, new_task("ask", at(0))).await;
        let requests: BTreeMap<String, serde_json::Value> =
            [("confirm".into(), json!({ "method": "elicitation/create", "params": { "message": "Proceed?" } }))].into();
        let answered: BTreeMap<String, serde_json::Value> = [("earlier".into(), json!({ "action": "accept" }))].into();
        ack(&change(
            s,
            &asks.id,
            Change {
                now: at(2),
                status: Some(TaskStatus::InputRequired),
                input_requests: Some(requests),
                input_responses: Some(answered),
                status_message: Some(Some("waiting for confirmation".into())),
                ..Change::default()
            },
        )
        .await);

        let done = create(s, new_task("report", at(0))).await;
        ack(&change(
            s,
            &done.id,
            Change {
                now: at(3),
                status: Some(TaskStatus::Completed),
                terminal_at: Some(at(3)),
                expires_at: Some(Some(at(3603))),
                result: Some(json!({ "content": [{ "type": "text", "text": "42 rows ✓" }], "isError": false })),
                ..Change::default()
            },
        )
        .await);

        let failed = create(s, new_task("flaky", at(0))).await;
        let error = TaskError::internal("upstream kept failing").with_data(json!({ "attempts": 3 }));
        ack(&change(
            s,
            &failed.id,
            Change {
                now: at(4),
                status: Some(TaskStatus::Failed),
                attempt: Some(3),
                terminal_at: Some(at(4)),
                error: Some(error.clone()),
                dead_letter: Some(NewDeadLetter { reason: "poison: attempts exhausted".into(), error, dead_at: at(4) }),
                ..Change::default()
            },
        )
        .await);

        let cancelled = create(s, new_task("report", at(0))).await;
        ack(&change(
            s,
            &cancelled.id,
            Change {
                now: at(5),
                status: Some(TaskStatus::Cancelled),
                cancel_requested: Some(true),
                terminal_at: Some(at(5)),
                ..Change::default()
            },
        )
        .await);

        // Concurrent creators, until the parent kills us.
        let mut creators = Vec::new();
        for _ in 0..8 {
            let store = Arc::clone(&store);
            creators.push(tokio::spawn(async move {
                let mut n = 0i64;
                loop {
                    let new = mcp_tasks_store::NewTask { arguments: json!({ "n": n }), ..new_task("bulk", at(n)) };
                    ack(&create(&*store, new).await);
                    n += 1;
                }
            }));
        }
        for creator in creators {
            let _ = creator.await;
        }
    });
}

fn parent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("crash.db");
    let mut child = Command::new(std::env::current_exe().expect("own path"))
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("child stdout");
    let mut acked: HashMap<TaskId, TaskRecord> = HashMap::new();
    let mut lines = 0;
    let started = Instant::now();
    // The reader outlives the kill: were the pipe closed first, the child's
    // next acknowledgement would fail and it would exit cleanly instead of
    // dying by the signal.
    let mut reader = BufReader::new(stdout);
    for line in (&mut reader).lines() {
        let line = line.expect("read child output");
        let Some(json) = line.strip_prefix("ACK ") else {
            continue;
        };
        let record: TaskRecord = serde_json::from_str(json).expect("ack parses");
        acked.insert(record.id.clone(), record);
        lines += 1;
        if lines >= KILL_AFTER_ACKS {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "child too slow: {lines} acks in 2 min");
    }
    assert!(lines >= KILL_AFTER_ACKS, "child exited early after {lines} acks");
    // Child::kill sends SIGKILL on unix: no destructor, no checkpoint, no clean close.
    child.kill().expect("SIGKILL the child");
    let status = child.wait().expect("reap child");
    drop(reader);
    assert!(!status.success(), "the child must have died by the signal, not exited: {status:?}");

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let store = SqliteStore::open(&path).expect("the killed database reopens");
        let statuses: Vec<TaskStatus> = acked.values().map(|r| r.status).collect();
        for status in [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ] {
            assert!(statuses.contains(&status), "the child acknowledged no {status} task");
        }
        assert!(acked.values().any(|r| r.lease.is_some()), "the child acknowledged no leased task");
        for (id, expected) in &acked {
            let found = store.get(id).await.expect("get").unwrap_or_else(|| panic!("acknowledged task {id} was lost"));
            assert_eq!(&found, expected, "acknowledged task {id} changed across the crash");
        }
        let failed = acked.values().find(|r| r.status == TaskStatus::Failed).expect("a failed task");
        let letter = store.get_dead_letter(&failed.id).await.expect("get_dead_letter").expect("its dead letter survived");
        assert_eq!(letter.attempts, 3);
        let total: u64 = store.count_by_status().await.expect("count").values().sum();
        assert!(total as usize >= acked.len(), "{total} rows < {} acknowledged", acked.len());
        eprintln!("crash test: {} acknowledged tasks all intact ({} rows after SIGKILL)", acked.len(), total);
    });
}
