//! The store's writes, each run by the writer thread on its connection
//! inside the current group-commit transaction.

use std::sync::LazyLock;

use mcp_tasks_core::{TaskId, TaskRecord, Timestamp, call_fingerprint};
use mcp_tasks_store::{
    AttemptEnd, ClaimParams, Created, Guard, GuardedUpdate, NewDeadLetter, NewTask, PurgeQuery, StoreError, Update,
    UpdateOutcome, argument_bytes,
};
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, ffi, params, params_from_iter};

use crate::counts;
use crate::quarantine::{decode_rows, quarantine_all};
use crate::row::{TASK_COLUMNS, task_from_row, to_json, unavailable};
use crate::row_key;
use crate::update_sql::{Action, Bindings, GuardTerm, SetColumn};
use crate::write_tx::WriteTx;

/// The claim's candidate filter, spelled as the `tasks_claim` index's `WHERE`.
pub(crate) const CLAIMABLE: &str =
    "status = 'working' AND lease_owner IS NULL AND cancel_requested = 0 AND run_at IS NOT NULL";

fn one_task(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<Option<TaskRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(unavailable)?;
    let mut rows = stmt.query(params).map_err(unavailable)?;
    match rows.next().map_err(unavailable)? {
        Some(row) => task_from_row(row).map(Some),
        None => Ok(None),
    }
}

/// The task holding idempotency key `?2` of principal `?1` (`''` for none),
/// spelled as the `tasks_idempotency` index.
pub(crate) fn idempotency_sql() -> String {
    format!("SELECT {TASK_COLUMNS} FROM tasks WHERE coalesce(principal, '') = ?1 AND idempotency_key = ?2")
}

/// What principal `?1` (`''` for none) holds: one primary-key lookup.
pub(crate) const USAGE_SQL: &str = "SELECT tasks, argument_bytes FROM principal_usage WHERE principal = ?1";

/// Inserts a task, or returns the task its idempotency key is bound to,
/// refusing it if it would pass `new.quota`.
pub(crate) fn create(conn: &WriteTx, new: NewTask) -> Result<Created, StoreError> {
    let fingerprint = call_fingerprint(&new.tool, &new.arguments);
    if let Some(key) = &new.idempotency_key
        && let Some(existing) =
            one_task(conn, &idempotency_sql(), params![new.principal.as_deref().unwrap_or_default(), key])?
    {
        if existing.fingerprint == fingerprint {
            return Ok(Created { record: existing, created: false });
        }
        return Err(StoreError::IdempotencyConflict { key: key.clone(), existing: existing.id });
    }
    if let Some(quota) = &new.quota {
        // Inside the writer's transaction: concurrent creations are
        // serialised, so none can slip past the limit. What the table says
        // plus this transaction's creations, not yet in it.
        let principal = new.principal.as_deref().unwrap_or_default();
        let (tasks, bytes): (i64, i64) = conn
            .prepare_cached(USAGE_SQL)
            .and_then(|mut s| s.query_row([principal], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(unavailable)?
            .unwrap_or_default();
        let pending = counts::pending_usage(conn, principal);
        let (tasks, bytes) = (tasks + pending.tasks, bytes + pending.argument_bytes);
        quota.admit(new.principal.as_deref(), tasks.max(0) as u64, bytes.max(0) as u64, argument_bytes(&new.arguments))?;
    }
    // The statement is the same text every time, so the cache prepares it once.
    const INSERT: &str = "INSERT INTO tasks (id, version, tool, arguments, principal, status, status_message, attempt, \
           max_attempts, created_at, updated_at, deadline_at, run_at, last_seen_at, cancel_requested, input_requests, \
           input_responses, idempotency_key, fingerprint, traceparent, lease_owner, lease_expires_at, rowid) \
         VALUES (?1, 1, ?2, ?3, ?4, 'working', ?5, 1, ?6, ?7, ?7, ?8, ?9, ?7, 0, '{}', '{}', ?10, ?11, ?12, ?13, ?14, ?15)";
    let arguments = to_json(&new.arguments);
    let mut stmt = conn.prepare_cached(INSERT).map_err(unavailable)?;
    let mut insert = |rowid: Option<i64>| {
        stmt.execute(params![
            new.id.as_str(),
            new.tool,
            arguments,
            new.principal,
            new.status_message,
            new.max_attempts,
            new.created_at.as_millis(),
            new.deadline_at.as_millis(),
            new.run_at.as_millis(),
            new.idempotency_key,
            fingerprint,
            new.trace_parent,
            new.lease.as_ref().map(|l| l.owner.as_str()),
            new.lease.as_ref().map(|l| l.expires_at.as_millis()),
            rowid,
        ])
    };
    // Under the rowid its id gives (see `row_key.rs`), so a read finds the
    // row without the id index; if another id of the same millisecond took
    // it, under the next free rowid, found through the id index.
    let inserted = match row_key::rowid_of(&new.id) {
        Some(rowid) => match insert(Some(rowid)) {
            Err(e) if is_rowid_taken(&e) => insert(None),
            other => other,
        },
        None => insert(None),
    };
    match inserted {
        // The row holds exactly what `into_record` builds: answering with it
        // spares reading the row back and decoding its JSON again.
        Ok(1) => {
            counts::count_created(conn, &new.tool, new.principal.as_deref(), arguments.len());
            Ok(Created { record: new.into_record(fingerprint), created: true })
        }
        Ok(n) => Err(StoreError::Unavailable(format!("insert of task {} wrote {n} rows", new.id))),
        Err(e) if is_primary_key_error(&e) => Err(StoreError::DuplicateId(new.id)),
        Err(e) => Err(unavailable(e)),
    }
}

fn is_primary_key_error(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
}

/// An insert under a rowid another row holds (SQLite checks the rowid
/// before the id index, so a duplicate id also fails so first).
fn is_rowid_taken(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == ffi::SQLITE_CONSTRAINT_ROWID)
}

/// A statement on the guard's row that checks each of its terms.
fn guarded(action: Action, guard: &Guard) -> Bindings {
    let mut b = Bindings::new(action, guard.id.0.clone());
    if let Some(v) = guard.version {
        b.check(GuardTerm::Version, Sql::Integer(v));
    }
    if let Some(s) = guard.status {
        b.check(GuardTerm::Status, Sql::Text(s.as_str().to_owned()));
    }
    if let Some(a) = guard.attempt {
        b.check(GuardTerm::Attempt, Sql::Integer(a.into()));
    }
    if let Some(owner) = &guard.lease_owner {
        b.check(GuardTerm::LeaseOwner, Sql::Text(owner.clone()));
    }
    if let Some(c) = guard.cancel_requested {
        b.check(GuardTerm::CancelRequested, Sql::Integer(c.into()));
    }
    if let Some(t) = guard.last_seen_at_or_before {
        b.check(GuardTerm::LastSeenAtOrBefore, Sql::Integer(t.as_millis()));
    }
    b
}

fn opt_instant(t: Option<Timestamp>) -> Sql {
    t.map_or(Sql::Null, |t| Sql::Integer(t.as_millis()))
}

fn opt_text(s: Option<String>) -> Sql {
    s.map_or(Sql::Null, Sql::Text)
}

/// Applies one guarded update: a single `UPDATE`/`DELETE` whose `WHERE`
/// carries the guard, so the compare and the set are one statement. With
/// `read_back` an applied change answers the row after it; without, `None`
/// (no `RETURNING`, nothing decoded) unless it writes a dead letter, which
/// is built from the row.
pub(crate) fn apply(conn: &WriteTx, update: &GuardedUpdate, read_back: bool) -> Result<UpdateOutcome, StoreError> {
    let GuardedUpdate { guard, update } = update;
    let id = &guard.id;
    let outcome = match update {
        Update::Delete => {
            let (sql, values) = guarded(Action::Delete, guard).into_statement();
            let deleted = conn.prepare_cached(&sql).and_then(|mut s| s.execute(params_from_iter(values)));
            (deleted.map_err(unavailable)? == 1).then_some(UpdateOutcome::Applied(None))
        }
        Update::Change(change) => {
            let returning = read_back || change.dead_letter.is_some();
            let mut b = guarded(Action::Change { to: change.status, returning }, guard);
            if change.is_visible() {
                b.set(SetColumn::UpdatedAt, Sql::Integer(change.now.as_millis()));
            }
            if let Some(s) = change.status {
                b.set(SetColumn::Status, Sql::Text(s.as_str().to_owned()));
            }
            if let Some(m) = &change.status_message {
                b.set(SetColumn::StatusMessage, opt_text(m.clone()));
            }
            if let Some(a) = change.attempt {
                b.set(SetColumn::Attempt, Sql::Integer(a.into()));
            }
            if let Some(m) = change.max_attempts {
                b.set(SetColumn::MaxAttempts, Sql::Integer(m.into()));
            }
            if let Some(r) = change.run_at {
                b.set(SetColumn::RunAt, opt_instant(r));
            }
            if let Some(lease) = &change.lease {
                let (owner, expires) = lease.as_ref().map_or((None, None), |l| (Some(l.owner.clone()), Some(l.expires_at)));
                b.set(SetColumn::LeaseOwner, opt_text(owner));
                b.set(SetColumn::LeaseExpiresAt, opt_instant(expires));
            }
            if let Some(c) = change.cancel_requested {
                b.set(SetColumn::CancelRequested, Sql::Integer(c.into()));
            }
            if let Some(t) = change.terminal_at {
                b.set(SetColumn::TerminalAt, Sql::Integer(t.as_millis()));
            }
            if let Some(e) = change.expires_at {
                b.set(SetColumn::ExpiresAt, opt_instant(e));
            }
            if let Some(r) = &change.result {
                b.set(SetColumn::Result, Sql::Text(to_json(r)));
            }
            if let Some(e) = &change.error {
                b.set(SetColumn::Error, Sql::Text(to_json(e)));
            }
            if let Some(r) = &change.input_requests {
                b.set(SetColumn::InputRequests, Sql::Text(to_json(r)));
            }
            if let Some(r) = &change.input_responses {
                b.set(SetColumn::InputResponses, Sql::Text(to_json(r)));
            }
            let (sql, values) = b.into_statement();
            // What the counts hold the task as, read before the change moves it.
            let counted = match change.status {
                Some(_) => counts::counted_as(conn, id)?,
                None => None,
            };
            let count = || {
                if let (Some(before), Some(to)) = (&counted, change.status) {
                    counts::count_status_change(conn, before, to.as_str());
                }
            };
            if !returning {
                let changed = conn.prepare_cached(&sql).and_then(|mut s| s.execute(params_from_iter(values)));
                if changed.map_err(unavailable)? == 1 {
                    count();
                    if let Some(end) = &change.attempt_end {
                        insert_attempt(conn, id, change.now, end)?;
                    }
                    return Ok(UpdateOutcome::Applied(None));
                }
                return lost_or_gone(conn, id);
            }
            match one_task(conn, &sql, params_from_iter(values))? {
                Some(record) => {
                    count();
                    if let Some(letter) = &change.dead_letter {
                        insert_dead_letter(conn, &record, letter)?;
                    }
                    if let Some(end) = &change.attempt_end {
                        insert_attempt(conn, &record.id, change.now, end)?;
                    }
                    Some(UpdateOutcome::Applied(read_back.then_some(record)))
                }
                None => None,
            }
        }
    };
    match outcome {
        Some(applied) => Ok(applied),
        None => lost_or_gone(conn, id),
    }
}

/// The outcome of an update whose guard did not hold: the row exists or not.
fn lost_or_gone(conn: &Connection, id: &TaskId) -> Result<UpdateOutcome, StoreError> {
    let exists =
        conn.query_row("SELECT 1 FROM tasks WHERE id = ?1", [id.as_str()], |_| Ok(())).optional().map_err(unavailable)?;
    Ok(if exists.is_some() { UpdateOutcome::Lost } else { UpdateOutcome::NotFound })
}

fn insert_dead_letter(conn: &Connection, record: &TaskRecord, letter: &NewDeadLetter) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO dead_letters \
           (task_id, tool, arguments, principal, attempts, reason, error, dead_at, requeued_as) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
    )
    .and_then(|mut s| {
        s.execute(params![
            record.id.as_str(),
            record.tool,
            to_json(&record.arguments),
            record.principal,
            record.attempt,
            letter.reason,
            to_json(&letter.error),
            letter.dead_at.as_millis(),
        ])
    })
    .map_err(unavailable)?;
    Ok(())
}

/// Records an ended attempt, in the transaction of the change that ended it.
fn insert_attempt(conn: &Connection, task: &TaskId, ended_at: Timestamp, end: &AttemptEnd) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO task_attempts (task_id, attempt, started_at, ended_at, owner, outcome, class, error, message) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )
    .and_then(|mut s| {
        s.execute(params![
            task.as_str(),
            end.attempt,
            end.started_at.map(Timestamp::as_millis),
            ended_at.as_millis(),
            end.owner,
            end.outcome.as_str(),
            end.class.map(|c| c.to_string()),
            end.error.as_ref().map(to_json),
            end.message,
        ])
    })
    .map_err(unavailable)?;
    Ok(())
}

/// How a poll flush sets a task's instants: never backwards.
const RECORD_POLL_SET: &str =
    "UPDATE tasks SET last_polled_at = max(coalesce(last_polled_at, ?2), ?2), last_seen_at = max(last_seen_at, ?2)";

/// A poll instant written at the rowid the task's id gives (`?3`).
pub(crate) static RECORD_POLL_PROBE_SQL: LazyLock<String> =
    LazyLock::new(|| format!("{RECORD_POLL_SET} WHERE rowid = ?3 AND id = ?1"));

/// A poll instant written through the id index.
pub(crate) static RECORD_POLL_SQL: LazyLock<String> = LazyLock::new(|| format!("{RECORD_POLL_SET} WHERE id = ?1"));

/// Writes poll instants; never moves one backwards, never bumps the version.
/// A task is looked for at its id's rowid first (`row_key.rs`), then by id:
/// a flush over a large store, one random task a poll, then touches one
/// page of the table a task instead of one of the id index as well.
pub(crate) fn record_polls(conn: &Connection, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
    let mut probe = conn.prepare_cached(&RECORD_POLL_PROBE_SQL).map_err(unavailable)?;
    let mut by_id = conn.prepare_cached(&RECORD_POLL_SQL).map_err(unavailable)?;
    for (id, at) in polls {
        let probed = match row_key::rowid_of(id) {
            Some(rowid) => probe.execute(params![id.as_str(), at.as_millis(), rowid]).map_err(unavailable)? == 1,
            None => false,
        };
        if !probed {
            by_id.execute(params![id.as_str(), at.as_millis()]).map_err(unavailable)?;
        }
    }
    Ok(())
}

/// The claim statement. Parameters: `?1` owner, `?2` lease expiry, `?3` now,
/// `?4` limit, and with `with_tools` `?5` a JSON array of tool names.
pub(crate) fn claim_sql(with_tools: bool) -> String {
    let tool_filter = if with_tools { " AND tool IN (SELECT value FROM json_each(?5))" } else { "" };
    format!(
        "UPDATE tasks SET lease_owner = ?1, lease_expires_at = ?2, version = version + 1 \
         WHERE id IN (SELECT id FROM tasks WHERE {CLAIMABLE} AND run_at <= ?3{tool_filter} \
                      ORDER BY run_at, id LIMIT ?4) \
         RETURNING {TASK_COLUMNS}"
    )
}

/// Leases up to `limit` due tasks in one statement: the single writer makes
/// the select-then-update atomic. A claimed row that does not decode is
/// quarantined (failed in place) in the same transaction and not returned.
pub(crate) fn claim(conn: &WriteTx, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
    if params.limit == 0 {
        return Ok(Vec::new());
    }
    let sql = claim_sql(params.tools.is_some());
    let limit = i64::try_from(params.limit).unwrap_or(i64::MAX);
    let tools = params.tools.as_ref().map(to_json);
    let p1 = params.owner.as_str();
    let (p2, p3) = (params.lease_expires_at.as_millis(), params.now.as_millis());
    let (mut claimed, unreadable) = {
        let mut stmt = conn.prepare_cached(&sql).map_err(unavailable)?;
        let mut rows = match &tools {
            Some(tools) => stmt.query(params![p1, p2, p3, limit, tools]),
            None => stmt.query(params![p1, p2, p3, limit]),
        }
        .map_err(unavailable)?;
        decode_rows(&mut rows)?
    };
    // One unreadable row must not roll back the whole claim: fail it (it was
    // just leased by this claim, so it is live) and hand out the rest.
    quarantine_all(conn, &unreadable, params.now)?;
    // RETURNING has no defined order; the contract says oldest run_at first.
    claimed.sort_by(|a, b| a.run_at.cmp(&b.run_at).then_with(|| a.id.cmp(&b.id)));
    Ok(claimed)
}

/// Creates the fresh task of a requeued dead letter and marks the letter.
pub(crate) fn requeue_dead_letter(conn: &WriteTx, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
    let requeued_as: Option<Option<String>> = conn
        .query_row("SELECT requeued_as FROM dead_letters WHERE task_id = ?1", [task.as_str()], |r| r.get(0))
        .optional()
        .map_err(unavailable)?;
    match requeued_as {
        None => return Err(StoreError::DeadLetterNotFound(task.clone())),
        Some(Some(previous)) => {
            return Err(StoreError::AlreadyRequeued { task: task.clone(), requeued_as: TaskId(previous) });
        }
        Some(None) => {}
    }
    let record = create(conn, new)?.record;
    conn.execute("UPDATE dead_letters SET requeued_as = ?1 WHERE task_id = ?2", params![record.id.as_str(), task.as_str()])
        .map_err(unavailable)?;
    Ok(record)
}

/// Deletes the dead letters matching every set filter.
pub(crate) fn purge_dead_letters(conn: &Connection, query: PurgeQuery) -> Result<u64, StoreError> {
    let ids = query.task_ids.as_ref().map(|ids| to_json(&ids.iter().map(TaskId::as_str).collect::<Vec<_>>()));
    let deleted = conn
        .execute(
            "DELETE FROM dead_letters \
             WHERE (?1 IS NULL OR task_id IN (SELECT value FROM json_each(?1))) \
               AND (?2 IS NULL OR dead_at < ?2) \
               AND (?3 IS NULL OR tool = ?3)",
            params![ids, query.dead_before.map(Timestamp::as_millis), query.tool],
        )
        .map_err(unavailable)?;
    Ok(deleted as u64)
}
