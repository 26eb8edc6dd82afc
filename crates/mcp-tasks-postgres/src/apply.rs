//! Guarded updates: each one `UPDATE … WHERE id = $1 AND <guard> AND <live
//! status>` (or `DELETE … AND <terminal status>`), so the compare and the
//! set are one statement. A concurrent writer of the same row makes this one
//! wait for its commit and then re-check the guard on the row it left: a
//! lost race changes nothing.

use std::collections::HashSet;

use deadpool_postgres::{GenericClient, Transaction};
use futures_util::future::try_join_all;
use mcp_tasks_core::{TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::{Guard, GuardedUpdate, NewDeadLetter, Update, UpdateOutcome};
use tokio_postgres::types::ToSql;

use crate::failure::Failure;
use crate::row::{TASK_COLUMNS, task_from_row, to_json};
use crate::schema::{LIVE, TERMINAL};

/// A statement's parameter values, numbered in the order pushed.
#[derive(Default)]
pub(crate) struct Params {
    values: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Params {
    /// Adds `value`; returns its placeholder (`$n`).
    pub(crate) fn push(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.values.push(Box::new(value));
        format!("${}", self.values.len())
    }

    /// The values, as a statement takes them.
    pub(crate) fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values.iter().map(|v| &**v as &(dyn ToSql + Sync)).collect()
    }
}

/// The `WHERE` of a guard, its values pushed to `params`.
fn guard_sql(guard: &Guard, params: &mut Params) -> String {
    let mut sql = format!(" WHERE id = {}", params.push(guard.id.0.clone()));
    let mut cond = |column: &str, op: &str, placeholder: String| {
        sql.push_str(&format!(" AND {column} {op} {placeholder}"));
    };
    if let Some(v) = guard.version {
        cond("version", "=", params.push(v));
    }
    if let Some(s) = guard.status {
        cond("status", "=", params.push(s.as_str().to_owned()));
    }
    if let Some(a) = guard.attempt {
        cond("attempt", "=", params.push(i64::from(a)));
    }
    if let Some(owner) = &guard.lease_owner {
        cond("lease_owner", "=", params.push(owner.clone()));
    }
    if let Some(c) = guard.cancel_requested {
        cond("cancel_requested", "=", params.push(c));
    }
    if let Some(t) = guard.last_seen_at_or_before {
        cond("last_seen_at", "<=", params.push(t.as_millis()));
    }
    sql
}

/// The statuses a change may start from: live ones (terminal rows never
/// change) from which the core's lifecycle allows the new status.
fn allowed_sources(to: Option<TaskStatus>) -> String {
    match to.map(TaskStatus::live_sources_sql) {
        None => LIVE.to_owned(),
        Some(Some(from)) => format!("{LIVE} AND status IN ({from})"),
        Some(None) => "false".to_owned(),
    }
}

/// Most `apply` calls one group commit carries, so one commit's latency
/// stays bounded.
pub(crate) const MAX_BATCH: usize = 256;

/// One `apply` (or `apply_unread`) call: its updates, applied in order in
/// the transaction of its group commit.
pub(crate) struct UpdateJob {
    /// The guarded updates.
    pub(crate) updates: Vec<GuardedUpdate>,
    /// Whether the caller reads the rows after: if not, an applied change
    /// answers `Applied(None)` and no row is sent back or decoded.
    pub(crate) read_back: bool,
}

/// Applies each job's updates in order, in `tx`: the outcomes of each job.
///
/// Every update's statement is sent at once: tokio-postgres pipelines the
/// requests polled together on one connection and PostgreSQL runs them in
/// the order sent, so a batch costs a round trip, not one per update. What
/// needs a changed row (a dead letter) or a miss (a lost race, or no row)
/// follows, in order, in the same transaction.
pub(crate) async fn apply_jobs(tx: &Transaction<'_>, jobs: &[UpdateJob]) -> Result<Vec<Vec<UpdateOutcome>>, Failure> {
    let updates: Vec<(&GuardedUpdate, bool)> =
        jobs.iter().flat_map(|job| job.updates.iter().map(move |u| (u, job.read_back))).collect();
    let statements: Vec<(String, Params)> = updates.iter().map(|(u, read_back)| statement(u, *read_back)).collect();
    let prepared = try_join_all(statements.iter().map(|(sql, _)| tx.prepare_cached(sql))).await?;
    let answers = try_join_all(statements.iter().zip(&prepared).map(|((_, params), stmt)| async move {
        let refs = params.refs();
        tx.query_opt(stmt, &refs).await
    }))
    .await?;

    let mut outcomes = Vec::with_capacity(updates.len());
    let mut misses = Vec::new();
    for (i, ((update, read_back), row)) in updates.iter().zip(answers).enumerate() {
        outcomes.push(match (&update.update, row) {
            (_, None) => {
                misses.push((i, update.guard.id.as_str()));
                UpdateOutcome::NotFound
            }
            (Update::Delete, Some(_)) => UpdateOutcome::Applied(None),
            (Update::Change(change), Some(row)) => match &change.dead_letter {
                Some(letter) => {
                    let record = task_from_row(&row)?;
                    insert_dead_letter(tx, &record, letter).await?;
                    UpdateOutcome::Applied(read_back.then_some(record))
                }
                None if *read_back => UpdateOutcome::Applied(Some(task_from_row(&row)?)),
                None => UpdateOutcome::Applied(None),
            },
        });
    }
    if !misses.is_empty() {
        // A guard that did not match a row that is there lost a race.
        let ids: Vec<&str> = misses.iter().map(|(_, id)| *id).collect();
        let stmt = tx.prepare_cached("SELECT id FROM tasks WHERE id = ANY($1::text[])").await?;
        let present: HashSet<String> = tx.query(&stmt, &[&ids]).await?.iter().map(|r| r.get(0)).collect();
        for (i, id) in misses {
            if present.contains(id) {
                outcomes[i] = UpdateOutcome::Lost;
            }
        }
    }
    let mut outcomes = outcomes.into_iter();
    Ok(jobs.iter().map(|job| outcomes.by_ref().take(job.updates.len()).collect()).collect())
}

/// The statement of one guarded update and its parameters: a `DELETE` of
/// a terminal row (answering its id), or an `UPDATE` of a live one that
/// answers the changed row (all of [`TASK_COLUMNS`] if `read_back`, else
/// its id) and, when the change ends an attempt, inserts the
/// attempt-history row in the same statement (the insert reads the row the
/// update changed, so a lost race inserts nothing).
pub(crate) fn statement(update: &GuardedUpdate, read_back: bool) -> (String, Params) {
    let GuardedUpdate { guard, update } = update;
    let mut params = Params::default();
    let Update::Change(change) = update else {
        let sql = format!("DELETE FROM tasks{} AND {TERMINAL} RETURNING id", guard_sql(guard, &mut params));
        return (sql, params);
    };
    let mut sets = Vec::new();
    let mut set = |column: &str, placeholder: String| {
        sets.push(format!("{column} = {placeholder}"));
    };
    if change.is_visible() {
        set("updated_at", params.push(change.now.as_millis()));
    }
    if let Some(s) = change.status {
        set("status", params.push(s.as_str().to_owned()));
    }
    if let Some(m) = &change.status_message {
        set("status_message", params.push(m.clone()));
    }
    if let Some(a) = change.attempt {
        set("attempt", params.push(i64::from(a)));
    }
    if let Some(m) = change.max_attempts {
        set("max_attempts", params.push(i64::from(m)));
    }
    if let Some(r) = change.run_at {
        set("run_at", params.push(r.map(|t| t.as_millis())));
    }
    if let Some(lease) = &change.lease {
        set("lease_owner", params.push(lease.as_ref().map(|l| l.owner.clone())));
        set("lease_expires_at", params.push(lease.as_ref().map(|l| l.expires_at.as_millis())));
    }
    if let Some(c) = change.cancel_requested {
        set("cancel_requested", params.push(c));
    }
    if let Some(t) = change.terminal_at {
        set("terminal_at", params.push(t.as_millis()));
    }
    if let Some(e) = change.expires_at {
        set("expires_at", params.push(e.map(|t| t.as_millis())));
    }
    if let Some(r) = &change.result {
        set("result", params.push(to_json(r)));
    }
    if let Some(e) = &change.error {
        set("error", params.push(to_json(e)));
    }
    if let Some(r) = &change.input_requests {
        set("input_requests", params.push(to_json(r)));
    }
    if let Some(r) = &change.input_responses {
        set("input_responses", params.push(to_json(r)));
    }
    sets.push("version = version + 1".to_owned());
    // A dead letter is built from the changed row: read it back.
    let returning = if read_back || change.dead_letter.is_some() { TASK_COLUMNS } else { "id" };
    let update = format!(
        "UPDATE tasks SET {}{} AND {} RETURNING {returning}",
        sets.join(", "),
        guard_sql(guard, &mut params),
        allowed_sources(change.status),
    );
    let Some(end) = &change.attempt_end else {
        return (update, params);
    };
    // Typed: parameters in a select list take no type from the insert's columns.
    let values = [
        params.push(i64::from(end.attempt)) + "::bigint",
        params.push(end.started_at.map(Timestamp::as_millis)) + "::bigint",
        params.push(change.now.as_millis()) + "::bigint",
        params.push(end.owner.clone()) + "::text",
        params.push(end.outcome.as_str().to_owned()) + "::text",
        params.push(end.class.map(|c| c.to_string())) + "::text",
        params.push(end.error.as_ref().map(to_json)) + "::text",
        params.push(end.message.clone()) + "::text",
    ];
    let sql = format!(
        "WITH changed AS ({update}), \
              attempt AS (INSERT INTO task_attempts \
                            (task_id, attempt, started_at, ended_at, owner, outcome, class, error, message) \
                          SELECT id, {} FROM changed) \
         SELECT {returning} FROM changed",
        values.join(", ")
    );
    (sql, params)
}

/// Writes the dead letter of `record`, replacing an older one of the same
/// task (the new letter is the newest: it gets a new sequence number).
async fn insert_dead_letter(tx: &Transaction<'_>, record: &TaskRecord, letter: &NewDeadLetter) -> Result<(), Failure> {
    let stmt = tx.prepare_cached("DELETE FROM dead_letters WHERE task_id = $1").await?;
    tx.execute(&stmt, &[&record.id.as_str()]).await?;
    let stmt = tx
        .prepare_cached(
            "INSERT INTO dead_letters \
               (task_id, tool, arguments, principal, attempts, reason, error, dead_at, requeued_as) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)",
        )
        .await?;
    tx.execute(
        &stmt,
        &[
            &record.id.as_str(),
            &record.tool,
            &to_json(&record.arguments),
            &record.principal,
            &i64::from(record.attempt),
            &letter.reason,
            &to_json(&letter.error),
            &letter.dead_at.as_millis(),
        ],
    )
    .await?;
    Ok(())
}
