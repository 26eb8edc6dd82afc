//! Claims: lease up to `limit` due tasks to one executor. Concurrent
//! claimers (in this process or another instance) skip each other's locked
//! rows, so they never receive the same task and never wait on each other.

use deadpool_postgres::{GenericClient, Pool};
use mcp_tasks_core::TaskRecord;
use mcp_tasks_store::ClaimParams;

use crate::failure::Failure;
use crate::row::{TASK_COLUMNS, tasks_from_rows};

/// The claim's candidate filter, spelled as the `tasks_claim` index's `WHERE`.
pub(crate) const CLAIMABLE: &str =
    "status = 'working' AND lease_owner IS NULL AND NOT cancel_requested AND run_at IS NOT NULL";

/// The claim statement. Parameters: `$1` owner, `$2` lease expiry, `$3`
/// now, `$4` limit, and with `with_tools` `$5` the tool names.
pub(crate) fn claim_sql(with_tools: bool) -> String {
    let tool_filter = if with_tools { " AND tool = ANY($5::text[])" } else { "" };
    // FOR UPDATE re-checks each candidate's filter after locking it, and
    // SKIP LOCKED passes over rows another claimer is taking right now.
    format!(
        "WITH due AS ( \
           SELECT id FROM tasks WHERE {CLAIMABLE} AND run_at <= $3{tool_filter} \
           ORDER BY run_at, id LIMIT $4 \
           FOR UPDATE SKIP LOCKED) \
         UPDATE tasks SET lease_owner = $1, lease_expires_at = $2, version = version + 1 \
         FROM due WHERE tasks.id = due.id \
         RETURNING {}",
        qualified_task_columns()
    )
}

/// [`TASK_COLUMNS`] qualified with `tasks.` (the claim joins another relation).
fn qualified_task_columns() -> String {
    TASK_COLUMNS.split(", ").map(|c| format!("tasks.{}", c.trim())).collect::<Vec<_>>().join(", ")
}

/// Leases up to `limit` due tasks, oldest `run_at` first, then by id.
pub(crate) async fn claim(pool: &Pool, params: &ClaimParams) -> Result<Vec<TaskRecord>, Failure> {
    if params.limit == 0 {
        return Ok(Vec::new());
    }
    let client = pool.get().await?;
    let limit = i64::try_from(params.limit).unwrap_or(i64::MAX);
    let (owner, expires, now) = (params.owner.as_str(), params.lease_expires_at.as_millis(), params.now.as_millis());
    let stmt = client.prepare_cached(&claim_sql(params.tools.is_some())).await?;
    let rows = match &params.tools {
        Some(tools) => client.query(&stmt, &[&owner, &expires, &now, &limit, tools]).await?,
        None => client.query(&stmt, &[&owner, &expires, &now, &limit]).await?,
    };
    let mut claimed = tasks_from_rows(&rows)?;
    // RETURNING has no defined order; the contract says oldest run_at first.
    claimed.sort_by(|a, b| a.run_at.cmp(&b.run_at).then_with(|| a.id.cmp(&b.id)));
    Ok(claimed)
}
