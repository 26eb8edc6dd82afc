//! The store's reads: one statement each, on any pooled connection.
//!
//! Every sweep query repeats the `WHERE` of its partial index and orders by
//! the index key, so PostgreSQL walks the index from its start and stops
//! after `limit` rows (`query_plans.rs` checks this with `EXPLAIN`).

use std::collections::BTreeMap;

use deadpool_postgres::{GenericClient, Pool};
use mcp_tasks_core::status::ALL_STATUSES;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus};
use mcp_tasks_store::{AttemptRecord, ListQuery, StoreError, SweepQuery};

use crate::apply::Params;
use crate::failure::Failure;
use crate::row::{TASK_COLUMNS, attempt_from_row, task_from_row, tasks_from_rows};
use crate::schema::{LIVE, TERMINAL};

/// The SQL of each sweep and the index it must use. Parameters: `$1` the
/// instant and `$2` the limit, or only `$1` the limit for `Leased` without
/// a cutoff.
pub(crate) fn sweep_sql(query: &SweepQuery) -> (String, &'static str) {
    let (filter, order, index, limit) = match query {
        SweepQuery::PastDeadline { .. } => (format!("{LIVE} AND deadline_at <= $1"), "deadline_at", "tasks_deadline", "$2"),
        SweepQuery::Unseen { .. } => (format!("{LIVE} AND last_seen_at <= $1"), "last_seen_at", "tasks_last_seen", "$2"),
        SweepQuery::Expired { .. } => {
            (format!("{TERMINAL} AND expires_at IS NOT NULL AND expires_at <= $1"), "expires_at", "tasks_expiry", "$2")
        }
        SweepQuery::Leased { before: Some(_), .. } => (
            format!("lease_owner IS NOT NULL AND {LIVE} AND lease_expires_at <= $1"),
            "lease_expires_at",
            "tasks_lease",
            "$2",
        ),
        SweepQuery::Leased { before: None, .. } => {
            (format!("lease_owner IS NOT NULL AND {LIVE}"), "lease_expires_at", "tasks_lease", "$1")
        }
    };
    (format!("SELECT {TASK_COLUMNS} FROM tasks WHERE {filter} ORDER BY {order}, id LIMIT {limit}"), index)
}

/// A `LIMIT` value.
pub(crate) fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// `limit` of a listing, where 0 means no limit (`LIMIT NULL`).
pub(crate) fn listing_limit(limit: usize) -> Option<i64> {
    (limit != 0).then(|| sql_limit(limit))
}

/// One task by id.
pub(crate) fn get_sql() -> String {
    format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1")
}

/// One task by id, only if `$2` owns it (NULL: anonymous): the owner is
/// compared in SQL, so another principal's row is never even sent.
pub(crate) fn get_visible_sql() -> String {
    format!("{} AND principal IS NOT DISTINCT FROM $2", get_sql())
}

/// One task.
pub(crate) async fn get(pool: &Pool, id: &TaskId) -> Result<Option<TaskRecord>, Failure> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(&get_sql()).await?;
    let row = client.query_opt(&stmt, &[&id.as_str()]).await?;
    Ok(row.as_ref().map(task_from_row).transpose()?)
}

/// One task, if `principal` owns it.
pub(crate) async fn get_visible(pool: &Pool, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, Failure> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(&get_visible_sql()).await?;
    let row = client.query_opt(&stmt, &[&id.as_str(), &principal]).await?;
    Ok(row.as_ref().map(task_from_row).transpose()?)
}

/// A sweep's candidates.
pub(crate) async fn sweep_candidates(pool: &Pool, query: &SweepQuery) -> Result<Vec<TaskRecord>, Failure> {
    let client = pool.get().await?;
    let (sql, _) = sweep_sql(query);
    let stmt = client.prepare_cached(&sql).await?;
    let rows = match *query {
        SweepQuery::PastDeadline { now: at, limit }
        | SweepQuery::Expired { now: at, limit }
        | SweepQuery::Unseen { cutoff: at, limit }
        | SweepQuery::Leased { before: Some(at), limit } => {
            client.query(&stmt, &[&at.as_millis(), &sql_limit(limit)]).await?
        }
        SweepQuery::Leased { before: None, limit } => client.query(&stmt, &[&sql_limit(limit)]).await?,
    };
    Ok(tasks_from_rows(&rows)?)
}

/// An operator listing, newest first, and its parameters. Only the filters
/// that are set appear in the SQL, so the planner sees each as a plain
/// range: an id prefix walks the primary key, a principal its
/// `tasks_principal` index, an age `tasks_created`.
pub(crate) fn list_statement(query: &ListQuery) -> (String, Params) {
    let mut params = Params::default();
    let mut filter = Vec::new();
    if !query.statuses.is_empty() {
        let statuses: Vec<String> = query.statuses.iter().map(|s| s.as_str().to_owned()).collect();
        filter.push(format!("status = ANY({}::text[])", params.push(statuses)));
    }
    if let Some(tool) = &query.tool {
        filter.push(format!("tool = {}", params.push(tool.clone())));
    }
    if let Some(principal) = &query.principal {
        filter.push(format!("principal = {}", params.push(principal.clone())));
    }
    if let Some(t) = query.created_before {
        filter.push(format!("created_at < {}", params.push(t.as_millis())));
    }
    if let Some(t) = query.created_since {
        filter.push(format!("created_at >= {}", params.push(t.as_millis())));
    }
    if let Some(prefix) = &query.id_prefix {
        let low = params.push(prefix.clone());
        let high = params.push(format!("{prefix}{}", char::MAX));
        filter.push(format!("id >= {low} AND id < {high}"));
    }
    let filter = if filter.is_empty() { String::new() } else { format!(" WHERE {}", filter.join(" AND ")) };
    let limit = params.push(listing_limit(query.limit));
    (format!("SELECT {TASK_COLUMNS} FROM tasks{filter} ORDER BY created_at DESC, id DESC LIMIT {limit}"), params)
}

/// An operator listing, newest first.
pub(crate) async fn list(pool: &Pool, query: &ListQuery) -> Result<Vec<TaskRecord>, Failure> {
    let client = pool.get().await?;
    let (sql, params) = list_statement(query);
    let stmt = client.prepare_cached(&sql).await?;
    let rows = client.query(&stmt, &params.refs()).await?;
    Ok(tasks_from_rows(&rows)?)
}

/// A task's ended attempts, oldest first (`$1` the task).
pub(crate) const ATTEMPTS_SQL: &str = "SELECT attempt, started_at, ended_at, owner, outcome, class, error, message \
     FROM task_attempts WHERE task_id = $1 ORDER BY seq";

/// A task's ended attempts, oldest first.
pub(crate) async fn attempts(pool: &Pool, task: &TaskId) -> Result<Vec<AttemptRecord>, Failure> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(ATTEMPTS_SQL).await?;
    let rows = client.query(&stmt, &[&task.as_str()]).await?;
    Ok(rows.iter().map(|r| attempt_from_row(task, r)).collect::<Result<_, _>>()?)
}

/// Tasks per status, every status present.
pub(crate) async fn count_by_status(pool: &Pool) -> Result<BTreeMap<TaskStatus, u64>, Failure> {
    let mut counts: BTreeMap<TaskStatus, u64> = ALL_STATUSES.into_iter().map(|s| (s, 0)).collect();
    let client = pool.get().await?;
    let stmt = client.prepare_cached("SELECT status, count(*) FROM tasks GROUP BY status").await?;
    for row in client.query(&stmt, &[]).await? {
        let status: String = row.try_get(0)?;
        let n: i64 = row.try_get(1)?;
        let status = status
            .parse::<TaskStatus>()
            .map_err(|e| StoreError::Corrupt { id: "(count by status)".into(), reason: e.to_string() })?;
        counts.insert(status, n.max(0) as u64);
    }
    Ok(counts)
}

/// Tasks per (status, tool) pair present (an index-only scan of
/// `tasks_tool_status` where the visibility map allows).
pub(crate) async fn count_by_status_and_tool(pool: &Pool) -> Result<BTreeMap<(TaskStatus, String), u64>, Failure> {
    let mut counts = BTreeMap::new();
    let client = pool.get().await?;
    let stmt = client.prepare_cached("SELECT status, tool, count(*) FROM tasks GROUP BY tool, status").await?;
    for row in client.query(&stmt, &[]).await? {
        let status: String = row.try_get(0)?;
        let tool: String = row.try_get(1)?;
        let n: i64 = row.try_get(2)?;
        let status = status
            .parse::<TaskStatus>()
            .map_err(|e| StoreError::Corrupt { id: "(count by status and tool)".into(), reason: e.to_string() })?;
        counts.insert((status, tool), n.max(0) as u64);
    }
    Ok(counts)
}

/// Run times of completed tasks of tool `$1`, newest first, at most `$2`.
pub(crate) const RECENT_DURATIONS_SQL: &str = "SELECT terminal_at - created_at FROM tasks \
     WHERE status = 'completed' AND terminal_at IS NOT NULL AND tool = $1 \
     ORDER BY terminal_at DESC, id DESC LIMIT $2";

/// Run times of the latest completed tasks of `tool`, newest first.
pub(crate) async fn recent_durations(pool: &Pool, tool: &str, limit: usize) -> Result<Vec<i64>, Failure> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(RECENT_DURATIONS_SQL).await?;
    let rows = client.query(&stmt, &[&tool, &sql_limit(limit)]).await?;
    Ok(rows.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>()?)
}
