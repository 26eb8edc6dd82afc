//! Run with: cargo run --release -p mcp-tasks-sqlite --example bench_create
//!
//! Durable task creations per second on this disk: one creator (each create
//! waits for its own commit) against 64 concurrent creators (group commit
//! shares each fsync), next to the disk's one-row-per-commit rate (a plain
//! SQLite insert per transaction, WAL, `synchronous = FULL`: one fsync each).
//! Every figure is the median of several runs on a fresh file.

use std::sync::Arc;
use std::time::Instant;

use mcp_tasks_core::{TaskId, Timestamp};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::{NewTask, TaskStore};

/// Runs per figure (override with `BENCH_RUNS`).
const RUNS: usize = 5;
const SERIAL_CREATES: usize = 1_000;
const CONCURRENT_CREATES: usize = 12_800;
const CREATORS: usize = 64;
const SINGLE_COMMITS: usize = 1_000;

fn task(n: usize) -> NewTask {
    let t = Timestamp::from_secs(1_750_000_000);
    NewTask {
        id: TaskId::random(),
        tool: "bench".into(),
        arguments: serde_json::json!({ "n": n, "payload": "x".repeat(64) }),
        principal: None,
        idempotency_key: None,
        trace_parent: None,
        max_attempts: 3,
        created_at: t,
        deadline_at: t.plus(std::time::Duration::from_secs(1800)),
        run_at: t,
        status_message: None,
        quota: None,
        lease: None,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Creations per second with `creators` concurrent callers on a fresh file,
/// and the average number of creations per commit.
async fn creations_per_sec(creators: usize, total: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(SqliteStore::open(dir.path().join("bench.db")).expect("open"));
    let per = total / creators;
    let start = Instant::now();
    let mut handles = Vec::new();
    for c in 0..creators {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move {
            for i in 0..per {
                store.create(task(c * per + i)).await.expect("create");
            }
        }));
    }
    for h in handles {
        h.await.expect("creator");
    }
    let rate = (per * creators) as f64 / start.elapsed().as_secs_f64();
    let stats = store.write_stats();
    (rate, stats.writes as f64 / stats.commits.max(1) as f64)
}

/// One-row-per-commit rate: each insert its own durable transaction.
fn single_commits_per_sec() -> f64 {
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = rusqlite::Connection::open(dir.path().join("fsync.db")).expect("open");
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)).expect("wal");
    conn.pragma_update(None, "synchronous", "FULL").expect("synchronous");
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)").expect("table");
    let body = "x".repeat(200);
    let start = Instant::now();
    for _ in 0..SINGLE_COMMITS {
        conn.execute("INSERT INTO t (body) VALUES (?1)", [&body]).expect("insert");
    }
    SINGLE_COMMITS as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let runs = std::env::var("BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(RUNS).max(1);
    let mut fsyncs = Vec::new();
    let mut serial = Vec::new();
    let mut concurrent = Vec::new();
    let mut batch = Vec::new();
    for run in 1..=runs {
        fsyncs.push(single_commits_per_sec());
        serial.push(rt.block_on(creations_per_sec(1, SERIAL_CREATES)).0);
        let (rate, per_commit) = rt.block_on(creations_per_sec(CREATORS, CONCURRENT_CREATES));
        concurrent.push(rate);
        batch.push(per_commit);
        eprintln!(
            "run {run}: commits/s {:.0}  1 creator {:.0}/s  {CREATORS} creators {:.0}/s",
            fsyncs[run - 1],
            serial[run - 1],
            concurrent[run - 1]
        );
    }
    let (f, s, c) = (median(fsyncs), median(serial), median(concurrent));
    println!("median of {runs} runs, fresh file each, WAL + synchronous=FULL");
    println!("{:<44} {:>12} {:>10}", "measure", "per second", "ratio");
    println!("{:<44} {:>12.0} {:>10}", "one-row-per-commit (fsyncs/s on this disk)", f, "1.00x");
    println!("{:<44} {:>12.0} {:>9.2}x", "durable creates, 1 creator", s, s / f);
    println!("{:<44} {:>12.0} {:>9.2}x", format!("durable creates, {CREATORS} concurrent creators"), c, c / f);
    println!("{CREATORS} creators vs 1 creator: {:.1}x", c / s);
    println!("{CREATORS} creators: {:.1} creations per commit (median)", median(batch));
}
