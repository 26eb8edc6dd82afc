//! The fleet fixtures' journal: one JSON line per event, appended to the file
//! named by [`JOURNAL_ENV`]. Appends are single `write` calls on a file opened
//! with `O_APPEND`, so lines of concurrent processes never interleave, and a
//! line written before a SIGKILL survives it (it is in the page cache).

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_tasks_runtime::TaskContext;
use serde::{Deserialize, Serialize};

/// The environment variable naming the journal file. When it is unset the
/// fixtures run without writing a journal.
pub const JOURNAL_ENV: &str = "MCP_TASKS_FLEET_JOURNAL";

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// `start`, `finish`, `stopped` or `answered`.
    pub event: String,
    /// The task id.
    pub task: String,
    /// The attempt the handler runs.
    pub attempt: u32,
    /// The process the handler runs in.
    pub pid: u32,
    /// Wall-clock milliseconds since the Unix epoch when it happened.
    pub at_ms: u64,
}

/// Wall-clock milliseconds since the Unix epoch.
pub(crate) fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Appends `event` for the handler behind `ctx`. A journal that cannot be
/// written is logged, not fatal: the journal observes the tool, it is not its work.
pub(crate) fn record(ctx: &TaskContext, event: &str) {
    let Some(path) = std::env::var_os(JOURNAL_ENV) else { return };
    let entry = JournalEntry {
        event: event.to_owned(),
        task: ctx.task_id().to_string(),
        attempt: ctx.attempt(),
        pid: std::process::id(),
        at_ms: wall_ms(),
    };
    let mut line = serde_json::to_string(&entry).unwrap_or_default();
    line.push('\n');
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = written {
        tracing::warn!(journal = %std::path::Path::new(&path).display(), error = %e, "cannot append to the fleet journal");
    }
}
