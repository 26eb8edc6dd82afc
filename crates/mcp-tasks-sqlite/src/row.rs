//! Mapping between a `tasks` / `dead_letters` row and its Rust value.

use std::cell::RefCell;

use mcp_tasks_core::{Lease, TaskError, TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::{AttemptOutcome, AttemptRecord, DeadLetter, StoreError, TaskRead};
use rusqlite::Row;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

/// The `tasks` columns [`task_from_row`] reads, in its order.
pub(crate) const TASK_COLUMNS: &str = "id, version, tool, arguments, principal, status, status_message, attempt, \
     max_attempts, created_at, updated_at, deadline_at, run_at, lease_owner, lease_expires_at, last_polled_at, \
     cancel_requested, terminal_at, expires_at, result, error, input_requests, input_responses, idempotency_key, \
     fingerprint, traceparent";

/// The `dead_letters` columns [`dead_letter_from_row`] reads, in its order.
pub(crate) const DEAD_LETTER_COLUMNS: &str =
    "task_id, tool, arguments, principal, attempts, reason, error, dead_at, requeued_as";

/// A database failure, as the store reports it.
pub(crate) fn unavailable(e: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// A value as JSON text for a JSON column.
pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    // Serialising a `Value`, `TaskError` or string map cannot fail.
    serde_json::to_string(value).unwrap_or_else(|e| format!("\"unserialisable: {e}\""))
}

/// Reads one row of [`TASK_COLUMNS`]; a value that does not decode is
/// reported as [`StoreError::Corrupt`] naming the task.
pub(crate) fn task_from_row(row: &Row<'_>) -> Result<TaskRecord, StoreError> {
    decode_task(row, false, ResultColumn::Decode).map(|d| d.record)
}

/// Reads one row of [`TASK_COLUMNS`] as [`task_from_row`] does, except
/// that the result stays the JSON text stored (checked to be JSON) in
/// [`TaskRead::result_text`].
pub(crate) fn task_read_from_row(row: &Row<'_>) -> Result<TaskRead, StoreError> {
    decode_task(row, false, ResultColumn::KeepText).map(|d| TaskRead { record: d.record, result_text: d.result_text })
}

/// Reads one row of [`TASK_COLUMNS`] for an operator listing, which must
/// show every task, readable or not: a JSON column that does not decode
/// reads as its empty value, and the status message says which column was
/// unreadable and why. Only a column SQLite itself cannot give back (which
/// its `STRICT` types rule out) is still an error.
pub(crate) fn task_from_row_for_listing(row: &Row<'_>) -> Result<TaskRecord, StoreError> {
    let Decoded { mut record, unreadable, .. } = decode_task(row, true, ResultColumn::Decode)?;
    if !unreadable.is_empty() {
        record.status_message = Some(format!("unreadable stored task: {}", unreadable.join("; ")));
    }
    Ok(record)
}

/// How [`decode_task`] reads the `result` column.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ResultColumn {
    /// Into the record's `result`.
    Decode,
    /// As its JSON text, checked, beside a record whose `result` is `None`.
    KeepText,
}

/// A decoded task row.
struct Decoded {
    record: TaskRecord,
    /// In lenient mode, the JSON columns that did not decode and why.
    unreadable: Vec<String>,
    /// The result's text, with [`ResultColumn::KeepText`].
    result_text: Option<Box<RawValue>>,
}

/// Decodes a task row; `lenient` turns an undecodable JSON column into its
/// empty value and a line of [`Decoded::unreadable`] instead of an error.
fn decode_task(row: &Row<'_>, lenient: bool, result_column: ResultColumn) -> Result<Decoded, StoreError> {
    let id: String = row.get(0).map_err(|e| corrupt("?", "id", e))?;
    let d = Decoder { id: &id, row, unreadable: lenient.then(Default::default) };
    let lease = match (d.get::<Option<String>>(13, "lease_owner")?, d.get::<Option<i64>>(14, "lease_expires_at")?) {
        (Some(owner), Some(expires)) => Some(Lease { owner, expires_at: Timestamp(expires) }),
        _ => None,
    };
    let status: String = d.get(5, "status")?;
    let record = TaskRecord {
        version: d.get(1, "version")?,
        tool: d.get(2, "tool")?,
        arguments: d.json(3, "arguments")?,
        principal: d.get(4, "principal")?,
        status: status.parse::<TaskStatus>().map_err(|e| corrupt(&id, "status", e))?,
        status_message: d.get(6, "status_message")?,
        attempt: d.get(7, "attempt")?,
        max_attempts: d.get(8, "max_attempts")?,
        created_at: d.instant(9, "created_at")?,
        updated_at: d.instant(10, "updated_at")?,
        deadline_at: d.instant(11, "deadline_at")?,
        run_at: d.get::<Option<i64>>(12, "run_at")?.map(Timestamp),
        lease,
        last_polled_at: d.get::<Option<i64>>(15, "last_polled_at")?.map(Timestamp),
        cancel_requested: d.get(16, "cancel_requested")?,
        terminal_at: d.get::<Option<i64>>(17, "terminal_at")?.map(Timestamp),
        expires_at: d.get::<Option<i64>>(18, "expires_at")?.map(Timestamp),
        result: if result_column == ResultColumn::Decode { d.opt_json(19, "result")? } else { None },
        error: d.opt_json::<TaskError>(20, "error")?,
        input_requests: d.json(21, "input_requests")?,
        input_responses: d.json(22, "input_responses")?,
        idempotency_key: d.get(23, "idempotency_key")?,
        fingerprint: d.get(24, "fingerprint")?,
        trace_parent: d.get(25, "traceparent")?,
        id: TaskId(id.clone()),
    };
    let result_text = if result_column == ResultColumn::KeepText { d.opt_raw_json(19, "result")? } else { None };
    let unreadable = d.unreadable.map(RefCell::into_inner).unwrap_or_default();
    Ok(Decoded { record, unreadable, result_text })
}

/// Reads one row of [`DEAD_LETTER_COLUMNS`].
pub(crate) fn dead_letter_from_row(row: &Row<'_>) -> Result<DeadLetter, StoreError> {
    let id: String = row.get(0).map_err(|e| corrupt("?", "task_id", e))?;
    let d = Decoder { id: &id, row, unreadable: None };
    Ok(DeadLetter {
        tool: d.get(1, "tool")?,
        arguments: d.json(2, "arguments")?,
        principal: d.get(3, "principal")?,
        attempts: d.get(4, "attempts")?,
        reason: d.get(5, "reason")?,
        error: d.strict_json(6, "error")?,
        dead_at: d.instant(7, "dead_at")?,
        requeued_as: d.get::<Option<String>>(8, "requeued_as")?.map(TaskId),
        task_id: TaskId(id.clone()),
    })
}

/// Reads one `task_attempts` row (`attempt, started_at, ended_at, owner,
/// outcome, class, error, message`) of `task`.
pub(crate) fn attempt_from_row(task: &TaskId, row: &Row<'_>) -> Result<AttemptRecord, StoreError> {
    let d = Decoder { id: task.as_str(), row, unreadable: None };
    let outcome: String = d.get(4, "outcome")?;
    let class: Option<String> = d.get(5, "class")?;
    Ok(AttemptRecord {
        task_id: task.clone(),
        attempt: d.get(0, "attempt")?,
        started_at: d.get::<Option<i64>>(1, "started_at")?.map(Timestamp),
        ended_at: d.instant(2, "ended_at")?,
        owner: d.get(3, "owner")?,
        outcome: AttemptOutcome::parse(&outcome).ok_or_else(|| corrupt(task.as_str(), "outcome", &outcome))?,
        class: class
            .map(|c| serde_json::from_value(serde_json::Value::String(c)))
            .transpose()
            .map_err(|e| corrupt(task.as_str(), "class", e))?,
        error: d.opt_json(6, "error")?,
        message: d.get(7, "message")?,
    })
}

fn corrupt(id: &str, column: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt { id: id.to_owned(), reason: format!("column {column}: {e}") }
}

/// Column reads that name the task and column when a value is bad.
struct Decoder<'a> {
    id: &'a str,
    row: &'a Row<'a>,
    /// Lenient mode: undecodable JSON columns are listed here, not errors.
    unreadable: Option<RefCell<Vec<String>>>,
}

impl Decoder<'_> {
    fn get<T: rusqlite::types::FromSql>(&self, index: usize, column: &str) -> Result<T, StoreError> {
        self.row.get(index).map_err(|e| corrupt(self.id, column, e))
    }

    fn instant(&self, index: usize, column: &str) -> Result<Timestamp, StoreError> {
        self.get::<i64>(index, column).map(Timestamp)
    }

    fn strict_json<T: DeserializeOwned>(&self, index: usize, column: &str) -> Result<T, StoreError> {
        let text: String = self.get(index, column)?;
        serde_json::from_str(&text).map_err(|e| corrupt(self.id, column, e))
    }

    fn json<T: DeserializeOwned + Default>(&self, index: usize, column: &str) -> Result<T, StoreError> {
        let text: String = self.get(index, column)?;
        serde_json::from_str(&text).or_else(|e| self.unreadable(column, e))
    }

    fn opt_json<T: DeserializeOwned>(&self, index: usize, column: &str) -> Result<Option<T>, StoreError> {
        match self.get::<Option<String>>(index, column)? {
            Some(text) => serde_json::from_str(&text).map(Some).or_else(|e| self.unreadable(column, e)),
            None => Ok(None),
        }
    }

    /// A nullable JSON column as its text, checked to be one JSON value.
    fn opt_raw_json(&self, index: usize, column: &str) -> Result<Option<Box<RawValue>>, StoreError> {
        match self.get::<Option<String>>(index, column)? {
            Some(text) => RawValue::from_string(text).map(Some).or_else(|e| self.unreadable(column, e)),
            None => Ok(None),
        }
    }

    /// A JSON column that did not decode: an error, or in lenient mode its
    /// empty value, noted.
    fn unreadable<T: Default>(&self, column: &str, e: serde_json::Error) -> Result<T, StoreError> {
        match &self.unreadable {
            Some(list) => {
                list.borrow_mut().push(format!("column {column}: {e}"));
                Ok(T::default())
            }
            None => Err(corrupt(self.id, column, e)),
        }
    }
}
