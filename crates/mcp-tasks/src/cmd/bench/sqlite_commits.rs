//! Scenario 6's floor: SQLite's raw commit rate on the benchmark's disk —
//! one row per transaction, `synchronous=FULL`, WAL, as the task store
//! opens its file — what one fsync'd commit per creation would allow.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::measurement::{Measurement, Scenario};

/// Commits one row per transaction for `duration` into a new file in `dir`.
pub(crate) fn raw_commits(dir: &Path, duration: Duration) -> anyhow::Result<Measurement> {
    let path = dir.join(format!("raw-commits-{}.db", std::process::id()));
    let outcome = commit_for(&path, duration);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let (count, elapsed) = outcome?;
    let seconds = elapsed.as_secs_f64();
    Ok(Measurement {
        scenario: Scenario::SqliteRawCommits,
        subject: "SQLite".to_owned(),
        clients: Some(1),
        stored: None,
        count,
        errors: 0,
        first_error: None,
        seconds,
        per_second: count as f64 / seconds,
        latency: None,
        bytes: None,
        same_mix: None,
        one_live: None,
        peer: None,
        run_rates: Vec::new(),
        runs: 1,
    })
}

fn commit_for(path: &Path, duration: Duration) -> anyhow::Result<(u64, Duration)> {
    let conn = rusqlite::Connection::open(path).with_context(|| format!("cannot create {}", path.display()))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.execute_batch("CREATE TABLE rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)")?;
    let mut insert = conn.prepare("INSERT INTO rows (payload) VALUES (?1)")?;
    let payload = r#"{"ms":3600000}"#;
    let started = Instant::now();
    let mut count = 0u64;
    while started.elapsed() < duration {
        // Autocommit: each statement is its own transaction, fsync'd.
        insert.execute([payload])?;
        count += 1;
    }
    Ok((count, started.elapsed()))
}
