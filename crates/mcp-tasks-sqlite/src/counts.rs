//! The tables of counts — `task_counts` (tasks per tool and status, for the
//! `/metrics` gauge) and `principal_usage` (tasks and argument bytes per
//! principal, for quotas) — kept by the writer in the transaction of the
//! writes they count.
//!
//! A write adds its change to the writer's tally (`tally.rs`) in memory; the tally
//! reaches the tables just before the transaction commits, one statement per
//! (tool, status) pair and per principal the batch touched. Two or three
//! statements a creation or status change became a few a batch (6% of a
//! trivial task's instructions end to end, 8% of a creation's, by
//! callgrind). Not triggers on `tasks` either:
//! SQLite runs a statement that fires a trigger with a statement journal, so
//! a creation or status change copied every page it touched into the
//! sub-journal (schema versions 8 and 9 dropped those triggers). Deletions
//! still count themselves by trigger, straight into the tables: they are
//! rare and sweep many rows at once. The tables only ever add deltas
//! (schema version 10 made the deletion triggers add theirs too), so the
//! order in which the tally and the triggers reach them does not matter.

use mcp_tasks_core::TaskId;
use mcp_tasks_store::StoreError;
use rusqlite::{Connection, OptionalExtension};

use crate::row::unavailable;
use crate::tally::{CountedAs, Usage};
use crate::write_tx::WriteTx;

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
pub(crate) fn count_created(tx: &WriteTx, tool: &str, principal: Option<&str>, argument_bytes: usize) {
    tx.tally().created(tool, principal.unwrap_or_default(), argument_bytes as i64);
}

/// Moves a task that was `before` to status `to` in the counts; nothing if
/// its status did not change.
pub(crate) fn count_status_change(tx: &WriteTx, before: &CountedAs, to: &str) {
    tx.tally().status_change(before, to);
}

/// What principal `principal` (`''` for none) holds beyond what
/// `principal_usage` says: the uncommitted creations of this transaction.
pub(crate) fn pending_usage(tx: &WriteTx, principal: &str) -> Usage {
    tx.tally().pending_usage(principal)
}
