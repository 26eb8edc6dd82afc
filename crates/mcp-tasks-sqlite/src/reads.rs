//! The store's reads, run on pooled read-only connections.
//!
//! Every sweep query repeats the `WHERE` of its partial index word for word
//! (see `schema.rs`) and orders by the index key, so SQLite walks the index
//! from its start and stops after `limit` rows.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use mcp_tasks_core::status::ALL_STATUSES;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus};
use mcp_tasks_store::{AttemptRecord, DeadLetter, DeadLetterQuery, ListQuery, StoreError, SweepQuery, TaskRead};
use rusqlite::{Connection, params};

use crate::quarantine::{Unreadable, decode_rows};
use crate::row::{
    DEAD_LETTER_COLUMNS, TASK_COLUMNS, attempt_from_row, dead_letter_from_row, task_from_row, task_from_row_for_listing,
    task_read_from_row, to_json, unavailable,
};
use crate::row_key;
use crate::schema::{LIVE, TERMINAL};

/// The SQL of each sweep: (query, index it must use). Parameters: `?1` the
/// instant, `?2` the limit.
pub(crate) fn sweep_sql(query: &SweepQuery) -> (String, &'static str) {
    let (filter, order, index) = match query {
        SweepQuery::PastDeadline { .. } => (format!("{LIVE} AND deadline_at <= ?1"), "deadline_at", "tasks_deadline"),
        SweepQuery::Unseen { .. } => (format!("{LIVE} AND last_seen_at <= ?1"), "last_seen_at", "tasks_last_seen"),
        SweepQuery::Expired { .. } => {
            (format!("{TERMINAL} AND expires_at IS NOT NULL AND expires_at <= ?1"), "expires_at", "tasks_expiry")
        }
        SweepQuery::Leased { before: Some(_), .. } => {
            (format!("lease_owner IS NOT NULL AND {LIVE} AND lease_expires_at <= ?1"), "lease_expires_at", "tasks_lease")
        }
        SweepQuery::Leased { before: None, .. } => {
            (format!("lease_owner IS NOT NULL AND {LIVE} AND ?1 IS NULL"), "lease_expires_at", "tasks_lease")
        }
    };
    (format!("SELECT {TASK_COLUMNS} FROM tasks WHERE {filter} ORDER BY {order}, id LIMIT ?2"), index)
}

fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// `limit` of a listing, where 0 means no limit (SQLite's `LIMIT -1`).
fn listing_limit(limit: usize) -> i64 {
    if limit == 0 { -1 } else { sql_limit(limit) }
}

/// `SELECT` of one task by id (`?1`), through the id index.
pub(crate) static GET_SQL: LazyLock<String> = LazyLock::new(|| format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"));

/// `SELECT` of one task by id (`?1`) and owner (`?2`), through the id index.
pub(crate) static GET_VISIBLE_SQL: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1 AND principal IS ?2"));

/// [`GET_SQL`] at the rowid its id gives (`?2`, see `row_key.rs`).
pub(crate) static PROBE_SQL: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {TASK_COLUMNS} FROM tasks WHERE rowid = ?2 AND id = ?1"));

/// [`GET_VISIBLE_SQL`] at the rowid its id gives (`?3`).
pub(crate) static PROBE_VISIBLE_SQL: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {TASK_COLUMNS} FROM tasks WHERE rowid = ?3 AND id = ?1 AND principal IS ?2"));

/// Whose task a read by id may return.
#[derive(Clone, Copy)]
enum Owner<'a> {
    /// Anyone's.
    Any,
    /// Only this principal's (`None`: the anonymous owner's).
    Only(Option<&'a str>),
}

/// The task `id` names (if `owner` may see it), decoded by `decode`: first
/// at the rowid its id gives, which walks the table alone, then, if no row
/// there is this task (an id of another form, or a rowid another task of
/// the same millisecond took), through the id index.
fn by_id<T>(
    conn: &Connection,
    id: &TaskId,
    owner: Owner<'_>,
    decode: impl Fn(&rusqlite::Row<'_>) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    if let Some(rowid) = row_key::rowid_of(id) {
        let probed = match owner {
            Owner::Any => one_row(conn, &PROBE_SQL, params![id.as_str(), rowid], &decode)?,
            Owner::Only(principal) => one_row(conn, &PROBE_VISIBLE_SQL, params![id.as_str(), principal, rowid], &decode)?,
        };
        if probed.is_some() {
            return Ok(probed);
        }
    }
    match owner {
        Owner::Any => one_row(conn, &GET_SQL, [id.as_str()], decode),
        Owner::Only(principal) => one_row(conn, &GET_VISIBLE_SQL, params![id.as_str(), principal], decode),
    }
}

/// The first row the cached statement `sql` selects, decoded by `decode`.
fn one_row<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    decode: impl FnOnce(&rusqlite::Row<'_>) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(unavailable)?;
    let mut rows = stmt.query(params).map_err(unavailable)?;
    match rows.next().map_err(unavailable)? {
        Some(row) => decode(row).map(Some),
        None => Ok(None),
    }
}

/// One task.
pub(crate) fn get(conn: &Connection, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
    by_id(conn, id, Owner::Any, task_from_row)
}

/// One task, only if `principal` owns it. The owner is part of the `WHERE`,
/// so another principal's row is never read or decoded: it costs what an
/// unknown id costs (`IS` matches `NULL` to `NULL` for the anonymous owner).
pub(crate) fn get_visible(
    conn: &Connection,
    id: &TaskId,
    principal: Option<&str>,
) -> Result<Option<TaskRecord>, StoreError> {
    by_id(conn, id, Owner::Only(principal), task_from_row)
}

/// [`get_visible`], with the result kept as its JSON text (checked, not
/// decoded) for an answer that writes it out as it is.
pub(crate) fn get_visible_for_answer(
    conn: &Connection,
    id: &TaskId,
    principal: Option<&str>,
) -> Result<Option<TaskRead>, StoreError> {
    by_id(conn, id, Owner::Only(principal), task_read_from_row)
}

/// A sweep's candidates that decode, and those that do not (for the
/// caller to quarantine).
pub(crate) fn sweep_candidates(
    conn: &Connection,
    query: SweepQuery,
) -> Result<(Vec<TaskRecord>, Vec<Unreadable>), StoreError> {
    let (sql, _) = sweep_sql(&query);
    let (at, limit) = match query {
        SweepQuery::PastDeadline { now, limit } | SweepQuery::Expired { now, limit } => (Some(now), limit),
        SweepQuery::Unseen { cutoff, limit } => (Some(cutoff), limit),
        SweepQuery::Leased { before, limit } => (before, limit),
    };
    let mut stmt = conn.prepare_cached(&sql).map_err(unavailable)?;
    let mut rows = stmt.query(params![at.map(|t| t.as_millis()), sql_limit(limit)]).map_err(unavailable)?;
    decode_rows(&mut rows)
}

/// An operator listing, newest first. Every row is listed: one whose JSON
/// does not decode is shown with empty values and a status message saying
/// what was unreadable, so operators see it.
pub(crate) fn list(conn: &Connection, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
    let statuses: Vec<&str> = query.statuses.iter().map(|s| s.as_str()).collect();
    let sql = list_sql(&query);
    let prefix_end = query.id_prefix.as_deref().map(prefix_upper_bound);
    let mut stmt = conn.prepare_cached(&sql).map_err(unavailable)?;
    let mut rows = stmt
        .query(params![
            to_json(&statuses),
            query.tool,
            listing_limit(query.limit),
            query.principal,
            query.created_before.map(|t| t.as_millis()),
            query.created_since.map(|t| t.as_millis()),
            query.id_prefix,
            prefix_end,
        ])
        .map_err(unavailable)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(unavailable)? {
        out.push(task_from_row_for_listing(row)?);
    }
    Ok(out)
}

/// The listing's SQL. Only the filters that are set appear in it, so the
/// planner sees each as a plain range: an id prefix walks the primary key,
/// a principal its `tasks_principal` index, an age `tasks_created`.
/// Parameters: `?1` statuses (JSON), `?2` tool, `?3` limit, `?4` principal,
/// `?5` created before, `?6` created since, `?7`/`?8` the id range.
pub(crate) fn list_sql(query: &ListQuery) -> String {
    let mut filter =
        String::from("(?1 = '[]' OR status IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR tool = ?2)");
    if query.principal.is_some() {
        filter.push_str(" AND principal = ?4");
    }
    if query.created_before.is_some() {
        filter.push_str(" AND created_at < ?5");
    }
    if query.created_since.is_some() {
        filter.push_str(" AND created_at >= ?6");
    }
    if query.id_prefix.is_some() {
        filter.push_str(" AND id >= ?7 AND id < ?8");
    } else {
        // Unused parameters must still appear for rusqlite to bind them.
        filter.push_str(" AND coalesce(?4, ?5, ?6, ?7, ?8, 1) IS NOT NULL");
    }
    format!("SELECT {TASK_COLUMNS} FROM tasks WHERE {filter} ORDER BY created_at DESC, id DESC LIMIT ?3")
}

/// The least text above every text that starts with `prefix` (byte order):
/// `prefix` followed by the largest character.
pub(crate) fn prefix_upper_bound(prefix: &str) -> String {
    format!("{prefix}{}", char::MAX)
}

/// A task's ended attempts, oldest first (`?1` the task).
pub(crate) const ATTEMPTS_SQL: &str = "SELECT attempt, started_at, ended_at, owner, outcome, class, error, message \
     FROM task_attempts WHERE task_id = ?1 ORDER BY seq";

/// A task's ended attempts, oldest first.
pub(crate) fn attempts(conn: &Connection, task: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(ATTEMPTS_SQL).map_err(unavailable)?;
    let mut rows = stmt.query([task.as_str()]).map_err(unavailable)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(unavailable)? {
        out.push(attempt_from_row(task, row)?);
    }
    Ok(out)
}

/// Tasks per status, every status present.
pub(crate) fn count_by_status(conn: &Connection) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
    let mut counts: BTreeMap<TaskStatus, u64> = ALL_STATUSES.into_iter().map(|s| (s, 0)).collect();
    let mut stmt = conn.prepare_cached("SELECT status, count(*) FROM tasks GROUP BY status").map_err(unavailable)?;
    let mut rows = stmt.query([]).map_err(unavailable)?;
    while let Some(row) = rows.next().map_err(unavailable)? {
        let status: String = row.get(0).map_err(unavailable)?;
        let n: i64 = row.get(1).map_err(unavailable)?;
        let status = status
            .parse::<TaskStatus>()
            .map_err(|e| StoreError::Corrupt { id: "(count by status)".into(), reason: e.to_string() })?;
        counts.insert(status, n.max(0) as u64);
    }
    Ok(counts)
}

/// Tasks per (status, tool): `task_counts`, kept by the writer (`counts.rs`), one row per pair.
pub(crate) const COUNT_BY_STATUS_AND_TOOL_SQL: &str = "SELECT status, tool, tasks FROM task_counts WHERE tasks > 0";

/// Tasks per (status, tool) pair present.
pub(crate) fn count_by_status_and_tool(conn: &Connection) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
    let mut counts = BTreeMap::new();
    let mut stmt = conn.prepare_cached(COUNT_BY_STATUS_AND_TOOL_SQL).map_err(unavailable)?;
    let mut rows = stmt.query([]).map_err(unavailable)?;
    while let Some(row) = rows.next().map_err(unavailable)? {
        let status: String = row.get(0).map_err(unavailable)?;
        let tool: String = row.get(1).map_err(unavailable)?;
        let n: i64 = row.get(2).map_err(unavailable)?;
        let status = status
            .parse::<TaskStatus>()
            .map_err(|e| StoreError::Corrupt { id: "(count by status and tool)".into(), reason: e.to_string() })?;
        counts.insert((status, tool), n.max(0) as u64);
    }
    Ok(counts)
}

/// Run times of completed tasks of tool `?1`, newest first, at most `?2`.
pub(crate) const RECENT_DURATIONS_SQL: &str = "SELECT terminal_at - created_at FROM tasks \
     WHERE status = 'completed' AND terminal_at IS NOT NULL AND tool = ?1 \
     ORDER BY terminal_at DESC, id DESC LIMIT ?2";

/// Run times of the latest completed tasks of `tool`, newest first.
pub(crate) fn recent_durations(conn: &Connection, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
    let mut stmt = conn.prepare_cached(RECENT_DURATIONS_SQL).map_err(unavailable)?;
    let rows = stmt.query_map(params![tool, sql_limit(limit)], |r| r.get(0)).map_err(unavailable)?;
    rows.collect::<Result<_, _>>().map_err(unavailable)
}

fn dead_letters(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<Vec<DeadLetter>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(unavailable)?;
    let mut rows = stmt.query(params).map_err(unavailable)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(unavailable)? {
        out.push(dead_letter_from_row(row)?);
    }
    Ok(out)
}

/// Dead letters, newest first.
pub(crate) fn list_dead_letters(conn: &Connection, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
    let sql = format!(
        "SELECT {DEAD_LETTER_COLUMNS} FROM dead_letters \
         WHERE (?1 IS NULL OR tool = ?1) AND (?2 OR requeued_as IS NULL) \
           AND (?4 IS NULL OR dead_at < ?4) AND (?5 IS NULL OR dead_at >= ?5) \
           AND (?6 IS NULL OR (task_id >= ?6 AND task_id < ?7)) \
         ORDER BY dead_at DESC, seq DESC LIMIT ?3"
    );
    dead_letters(
        conn,
        &sql,
        params![
            query.tool,
            query.include_requeued,
            listing_limit(query.limit),
            query.dead_before.map(|t| t.as_millis()),
            query.dead_since.map(|t| t.as_millis()),
            query.id_prefix.as_deref(),
            query.id_prefix.as_deref().map(prefix_upper_bound),
        ],
    )
}

/// One dead letter.
pub(crate) fn get_dead_letter(conn: &Connection, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
    let sql = format!("SELECT {DEAD_LETTER_COLUMNS} FROM dead_letters WHERE task_id = ?1");
    Ok(dead_letters(conn, &sql, [task.as_str()])?.pop())
}

/// Copies the database, as of one read snapshot, into a new file at `dest`.
pub(crate) fn backup_to(conn: &Connection, dest: &std::path::Path) -> Result<(), StoreError> {
    let target = dest.to_str().ok_or_else(|| StoreError::Open {
        path: dest.display().to_string(),
        reason: "the backup path is not valid UTF-8".into(),
    })?;
    conn.execute("VACUUM INTO ?1", [target])
        .map_err(|e| StoreError::Unavailable(format!("backup to {} failed: {e}", dest.display())))?;
    Ok(())
}
