//! Poll instants: many in one statement, never moving one backwards, never
//! bumping the version.

use deadpool_postgres::{GenericClient, Pool};
use mcp_tasks_core::{TaskId, Timestamp};

use crate::failure::Failure;

/// One `UPDATE` for every poll; several instants of one task collapse to
/// the latest, and `greatest` skips a NULL `last_polled_at`.
pub(crate) const RECORD_POLLS_SQL: &str = "UPDATE tasks SET last_polled_at = greatest(tasks.last_polled_at, p.at) \
     FROM (SELECT id, max(at) AS at FROM unnest($1::text[], $2::bigint[]) AS u(id, at) GROUP BY id) AS p \
     WHERE tasks.id = p.id";

/// Writes poll instants; unknown ids are ignored.
pub(crate) async fn record_polls(pool: &Pool, polls: &[(TaskId, Timestamp)]) -> Result<(), Failure> {
    // Sorted by id, so two concurrent flushes lock shared rows in one order.
    let mut polls = polls.to_vec();
    polls.sort();
    let ids: Vec<&str> = polls.iter().map(|(id, _)| id.as_str()).collect();
    let ats: Vec<i64> = polls.iter().map(|(_, at)| at.as_millis()).collect();
    let client = pool.get().await?;
    let stmt = client.prepare_cached(RECORD_POLLS_SQL).await?;
    client.execute(&stmt, &[&ids, &ats]).await?;
    Ok(())
}
