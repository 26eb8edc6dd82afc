//! The tables of counts — `task_counts` (tasks per tool and status, for the
//! `/metrics` gauge) and `principal_usage` (tasks and argument bytes per
//! principal, for quotas) — kept by the writer's own statements in the
//! transaction of the write they count.
//!
//! Statements, not triggers on `tasks`: SQLite runs a statement that fires
//! a trigger with a statement journal, so a creation or status change
//! copied every page it touched into the sub-journal (schema versions 8
//! and 9 dropped those triggers). Deletions still count themselves by
//! trigger: they are rare and sweep many rows at once.

use mcp_tasks_core::TaskId;
use mcp_tasks_store::StoreError;
use rusqlite::{Connection, OptionalExtension};

use crate::row::unavailable;

/// A task's tool and status as stored before a change: what a status
/// change moves its count away from.
#[derive(Debug)]
pub(crate) struct CountedAs {
    tool: String,
    status: String,
}

/// The row of `task_counts` task `id` is counted in, `None` if it is gone.
/// Read in the writer's transaction just before the change, so nothing can
/// change the row in between.
pub(crate) fn counted_as(conn: &Connection, id: &TaskId) -> Result<Option<CountedAs>, StoreError> {
    conn.prepare_cached("SELECT tool, status FROM tasks WHERE id = ?1")
        .and_then(|mut s| s.query_row([id.as_str()], |r| Ok(CountedAs { tool: r.get(0)?, status: r.get(1)? })).optional())
        .map_err(unavailable)
}

/// Counts a created task: one more `working` task of `tool`, and one more
/// task and its argument bytes for its principal (`''` for none).
pub(crate) fn count_created(
    conn: &Connection,
    tool: &str,
    principal: Option<&str>,
    argument_bytes: usize,
) -> Result<(), StoreError> {
    const USAGE: &str = "INSERT INTO principal_usage (principal, tasks, argument_bytes) VALUES (?1, 1, ?2) \
         ON CONFLICT (principal) DO UPDATE SET tasks = tasks + 1, argument_bytes = argument_bytes + excluded.argument_bytes";
    count_one_more(conn, tool, "working")?;
    conn.prepare_cached(USAGE)
        .and_then(|mut s| s.execute(rusqlite::params![principal.unwrap_or_default(), argument_bytes as i64]))
        .map_err(unavailable)?;
    Ok(())
}

/// Moves a task that was `before` to status `to` in the counts; nothing if
/// its status did not change.
pub(crate) fn count_status_change(conn: &Connection, before: &CountedAs, to: &str) -> Result<(), StoreError> {
    if before.status == to {
        return Ok(());
    }
    conn.prepare_cached("UPDATE task_counts SET tasks = tasks - 1 WHERE tool = ?1 AND status = ?2")
        .and_then(|mut s| s.execute([&before.tool, &before.status]))
        .map_err(unavailable)?;
    count_one_more(conn, &before.tool, to)
}

fn count_one_more(conn: &Connection, tool: &str, status: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO task_counts (tool, status, tasks) VALUES (?1, ?2, 1) \
         ON CONFLICT (tool, status) DO UPDATE SET tasks = tasks + 1",
    )
    .and_then(|mut s| s.execute([tool, status]))
    .map_err(unavailable)?;
    Ok(())
}
