//! Dead letters: listing, reading, requeuing as a fresh task, purging.

use deadpool_postgres::{GenericClient, Pool};
use mcp_tasks_core::{TaskId, TaskRecord, Timestamp};
use mcp_tasks_store::{DeadLetter, DeadLetterQuery, NewTask, PurgeQuery, StoreError};

use crate::create::create_one;
use crate::failure::Failure;
use crate::reads::listing_limit;
use crate::row::{DEAD_LETTER_COLUMNS, dead_letter_from_row};

/// Dead letters, newest first. `$1` tool or NULL, `$2` include requeued,
/// `$3` limit or NULL, `$4` dead before or NULL, `$5` dead since or NULL,
/// `$6`/`$7` the task id range of a prefix or NULL.
pub(crate) fn list_sql() -> String {
    format!(
        "SELECT {DEAD_LETTER_COLUMNS} FROM dead_letters \
         WHERE ($1::text IS NULL OR tool = $1) AND ($2 OR requeued_as IS NULL) \
           AND ($4::bigint IS NULL OR dead_at < $4) AND ($5::bigint IS NULL OR dead_at >= $5) \
           AND ($6::text IS NULL OR (task_id >= $6 AND task_id < $7)) \
         ORDER BY dead_at DESC, seq DESC LIMIT $3"
    )
}

/// Dead letters, newest first.
pub(crate) async fn list(pool: &Pool, query: &DeadLetterQuery) -> Result<Vec<DeadLetter>, Failure> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(&list_sql()).await?;
    let (before, since) = (query.dead_before.map(Timestamp::as_millis), query.dead_since.map(Timestamp::as_millis));
    let high = query.id_prefix.as_ref().map(|p| format!("{p}{}", char::MAX));
    let limit = listing_limit(query.limit);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
        [&query.tool, &query.include_requeued, &limit, &before, &since, &query.id_prefix, &high];
    let rows = client.query(&stmt, &params).await?;
    Ok(rows.iter().map(dead_letter_from_row).collect::<Result<_, _>>()?)
}

/// One dead letter.
pub(crate) async fn get(pool: &Pool, task: &TaskId) -> Result<Option<DeadLetter>, Failure> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(&format!("SELECT {DEAD_LETTER_COLUMNS} FROM dead_letters WHERE task_id = $1")).await?;
    let row = client.query_opt(&stmt, &[&task.as_str()]).await?;
    Ok(row.as_ref().map(dead_letter_from_row).transpose()?)
}

/// Creates the fresh task of a requeued dead letter and marks the letter,
/// in one transaction. The letter is locked first, so two operators
/// requeuing it at once make one task, and the other is told it was
/// requeued.
pub(crate) async fn requeue(pool: &Pool, task: &TaskId, new: &NewTask) -> Result<TaskRecord, Failure> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let stmt = tx.prepare_cached("SELECT requeued_as FROM dead_letters WHERE task_id = $1 FOR UPDATE").await?;
    let requeued_as: Option<Option<String>> =
        tx.query_opt(&stmt, &[&task.as_str()]).await?.map(|r| r.try_get(0)).transpose()?;
    match requeued_as {
        None => return Err(StoreError::DeadLetterNotFound(task.clone()).into()),
        Some(Some(previous)) => {
            return Err(StoreError::AlreadyRequeued { task: task.clone(), requeued_as: TaskId(previous) }.into());
        }
        Some(None) => {}
    }
    // On failure the transaction is dropped, rolled back: nothing changes.
    let record = create_one(&tx, new.clone()).await?.record;
    let stmt = tx.prepare_cached("UPDATE dead_letters SET requeued_as = $1 WHERE task_id = $2").await?;
    tx.execute(&stmt, &[&record.id.as_str(), &task.as_str()]).await?;
    tx.commit().await?;
    Ok(record)
}

/// Deletes the dead letters matching every set filter; returns how many.
pub(crate) async fn purge(pool: &Pool, query: &PurgeQuery) -> Result<u64, Failure> {
    let ids: Option<Vec<&str>> = query.task_ids.as_ref().map(|ids| ids.iter().map(TaskId::as_str).collect());
    let client = pool.get().await?;
    let stmt = client
        .prepare_cached(
            "DELETE FROM dead_letters \
             WHERE ($1::text[] IS NULL OR task_id = ANY($1::text[])) \
               AND ($2::bigint IS NULL OR dead_at < $2) \
               AND ($3::text IS NULL OR tool = $3)",
        )
        .await?;
    Ok(client.execute(&stmt, &[&ids, &query.dead_before.map(Timestamp::as_millis), &query.tool]).await?)
}
