//! Quarantining unreadable rows: one row whose stored JSON does not decode
//! must not stop every claim and sweep (and so all execution, or the
//! server's start when the row holds a lease).
//!
//! The claim and the sweeps decode their rows one by one, set aside any that
//! does not decode, and return the rest. A set-aside row that is still live
//! is failed in place — status `failed`, terminal, lease and due instant
//! cleared, and a JSON-RPC `-32603` error saying the stored task could not be
//! read and why — by an `UPDATE` that never decodes it, so the bad column
//! stays as it was for an operator to inspect. It is logged at error level
//! with its id. A terminal row is only logged and skipped: terminal is final.
//! A failed-in-place row's `expires_at` stays unset, so the expiry sweep never
//! deletes the evidence; `tasks list` shows the row and what was unreadable.
//!
//! One case is different: a row that became unreadable after it finished,
//! found by the expiry sweep because its retention has run out. It was due
//! for deletion anyway, so it is deleted (and logged) like any expired task.
//! Skipping it would bring it back at the head of every expiry sweep (they
//! run oldest expiry first, a batch at a time), and enough such rows would
//! keep every readable expired task from ever being deleted.

use mcp_tasks_core::{TaskError, TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::StoreError;
use rusqlite::{Connection, Rows, params};

use crate::counts;
use crate::row::{task_from_row, to_json, unavailable};
use crate::schema::{LIVE, TERMINAL};
use crate::write_tx::WriteTx;

/// A row that did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreadable {
    /// Its task id.
    pub(crate) id: TaskId,
    /// What did not decode (column and cause).
    pub(crate) reason: String,
}

/// Decodes every row, setting aside those that do not decode.
pub(crate) fn decode_rows(rows: &mut Rows<'_>) -> Result<(Vec<TaskRecord>, Vec<Unreadable>), StoreError> {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    while let Some(row) = rows.next().map_err(unavailable)? {
        match task_from_row(row) {
            Ok(record) => good.push(record),
            Err(StoreError::Corrupt { id, reason }) => bad.push(Unreadable { id: TaskId(id), reason }),
            Err(other) => return Err(other),
        }
    }
    Ok((good, bad))
}

/// The error a quarantined task reports.
pub(crate) fn unreadable_error(reason: &str) -> TaskError {
    TaskError::internal(format!(
        "the stored task could not be read ({reason}); it was failed without running so that \
         the other tasks could run"
    ))
}

/// Fails `row` in place at `now` if it is still live, without decoding it;
/// logs it either way. Returns whether it was failed.
pub(crate) fn quarantine(conn: &WriteTx, row: &Unreadable, now: Timestamp) -> Result<bool, StoreError> {
    let error = unreadable_error(&row.reason);
    let counted = counts::counted_as(conn, &row.id)?;
    let failed = conn
        .prepare_cached(&format!(
            "UPDATE tasks SET status = 'failed', status_message = ?2, error = ?3, terminal_at = ?4, \
               updated_at = ?4, run_at = NULL, lease_owner = NULL, lease_expires_at = NULL, \
               version = version + 1 \
             WHERE id = ?1 AND {LIVE}"
        ))
        .and_then(|mut s| s.execute(params![row.id.as_str(), "unreadable stored task", to_json(&error), now.as_millis()]))
        .map_err(unavailable)?
        == 1;
    if failed && let Some(before) = &counted {
        counts::count_status_change(conn, before, TaskStatus::Failed.as_str());
    }
    if failed {
        tracing::error!(task = %row.id, reason = %row.reason, "stored task is unreadable; failed it so the other tasks can run");
    } else {
        tracing::error!(task = %row.id, reason = %row.reason, "stored task is unreadable; it is terminal, so it was skipped and left as it is");
    }
    Ok(failed)
}

/// Quarantines every row of `rows` at `now`.
pub(crate) fn quarantine_all(conn: &WriteTx, rows: &[Unreadable], now: Timestamp) -> Result<(), StoreError> {
    for row in rows {
        quarantine(conn, row, now)?;
    }
    Ok(())
}

/// Deletes the unreadable `rows` an expiry sweep at `now` found: each only
/// if it is still terminal and its retention has run out (`expires_at` read
/// from its own column, never decoded). Logs each at error level. Returns
/// how many were deleted.
pub(crate) fn delete_expired(conn: &Connection, rows: &[Unreadable], now: Timestamp) -> Result<usize, StoreError> {
    let mut deleted = 0;
    let mut stmt = conn
        .prepare_cached(&format!(
            "DELETE FROM tasks WHERE id = ?1 AND {TERMINAL} AND expires_at IS NOT NULL AND expires_at <= ?2"
        ))
        .map_err(unavailable)?;
    for row in rows {
        if stmt.execute(params![row.id.as_str(), now.as_millis()]).map_err(unavailable)? == 1 {
            deleted += 1;
            tracing::error!(task = %row.id, reason = %row.reason, "stored task is unreadable; its retention had run out, so it was deleted as expired");
        }
    }
    Ok(deleted)
}
