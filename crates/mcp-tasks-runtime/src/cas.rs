//! The one read → decide → compare-and-set loop: every operation that
//! changes a task on behalf of a caller (cancel, answer, a handler's input
//! requests) reads the row, decides on what it read, writes guarded on it,
//! and on a lost race reads again — at most [`MAX_CAS_RETRIES`] times.

use std::future::Future;

use mcp_tasks_core::TaskRecord;
use mcp_tasks_store::{GuardedUpdate, TaskStore, UpdateOutcome};

use crate::error::RuntimeError;

/// How many times a read → decide → write cycle is tried before the caller
/// is told the task kept changing.
pub(crate) const MAX_CAS_RETRIES: usize = 16;

/// What one read decided.
#[derive(Debug)]
pub(crate) enum Decision<T> {
    /// Nothing to write: finish with this.
    Done(T),
    /// Write this guarded update; if it applies, finish with the value.
    Write(GuardedUpdate, T),
}

/// How the loop ended.
#[derive(Debug)]
pub(crate) enum Resolution<T> {
    /// A read decided to write nothing.
    Done(T),
    /// The write applied: the row after it (`None` for a deletion) and the
    /// value its decision carried.
    Applied(Option<Box<TaskRecord>>, T),
    /// The row was gone when written.
    Gone,
    /// Every try lost its race.
    Contended,
}

/// Applies one guarded update and returns its outcome.
pub(crate) async fn apply_one(store: &dyn TaskStore, update: GuardedUpdate) -> Result<UpdateOutcome, RuntimeError> {
    let mut outcomes = store.apply(vec![update]).await?;
    Ok(outcomes.pop().unwrap_or(UpdateOutcome::NotFound))
}

/// Applies one guarded update whose row the caller does not read after
/// ([`TaskStore::apply_unread`]): an applied change answers `Applied(None)`.
pub(crate) async fn apply_one_unread(store: &dyn TaskStore, update: GuardedUpdate) -> Result<UpdateOutcome, RuntimeError> {
    let mut outcomes = store.apply_unread(vec![update]).await?;
    Ok(outcomes.pop().unwrap_or(UpdateOutcome::NotFound))
}

/// Runs `read_and_decide`, writes what it decided, and repeats on a lost
/// race. An error from `read_and_decide` or the store ends the loop.
pub(crate) async fn read_decide_write<T, F, Fut>(
    store: &dyn TaskStore,
    mut read_and_decide: F,
) -> Result<Resolution<T>, RuntimeError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Decision<T>, RuntimeError>>,
{
    for _ in 0..MAX_CAS_RETRIES {
        let (update, value) = match read_and_decide().await? {
            Decision::Done(value) => return Ok(Resolution::Done(value)),
            Decision::Write(update, value) => (update, value),
        };
        let task = update.guard.id.clone();
        match apply_one(store, update).await? {
            UpdateOutcome::Applied(row) => return Ok(Resolution::Applied(row.map(Box::new), value)),
            UpdateOutcome::NotFound => return Ok(Resolution::Gone),
            UpdateOutcome::Lost => tracing::debug!(task = %task, "lost a race; re-reading"),
        }
    }
    Ok(Resolution::Contended)
}

/// The error a caller gets when the task kept changing under every try.
pub(crate) fn contended(id: &mcp_tasks_core::TaskId) -> RuntimeError {
    RuntimeError::Store(mcp_tasks_store::StoreError::Unavailable(format!(
        "task {id} kept changing under {MAX_CAS_RETRIES} consecutive attempts to update it; try again"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tasks_core::{TaskId, Timestamp};
    use mcp_tasks_store::{Change, Guard, MemoryStore, NewTask};
    use std::sync::atomic::{AtomicUsize, Ordering};

    async fn stored(store: &MemoryStore) -> TaskRecord {
        let now = Timestamp::from_secs(1);
        let new = NewTask {
            id: TaskId::from("t"),
            tool: "t".into(),
            arguments: serde_json::json!({}),
            principal: None,
            idempotency_key: None,
            trace_parent: None,
            max_attempts: 3,
            created_at: now,
            deadline_at: now.plus(std::time::Duration::from_secs(60)),
            run_at: now,
            status_message: None,
            quota: None,
            lease: None,
        };
        store.create(new).await.unwrap().record
    }

    fn message(record: &TaskRecord, text: &str) -> GuardedUpdate {
        let change = Change { now: Timestamp::from_secs(2), status_message: Some(Some(text.into())), ..Change::default() };
        GuardedUpdate::change(Guard::read(record), change)
    }

    #[tokio::test]
    async fn a_lost_race_reads_again_and_writes_on_the_fresh_row() {
        let store = MemoryStore::new();
        let first = stored(&store).await;
        let reads = AtomicUsize::new(0);
        let (store, first, reads) = (&store, &first, &reads);
        let resolution = read_decide_write(store, || async move {
            let read = if reads.fetch_add(1, Ordering::SeqCst) == 0 {
                // A rival writes between this read and its write.
                apply_one(store, message(first, "rival")).await?;
                first.clone()
            } else {
                store.get(&first.id).await?.unwrap()
            };
            Ok(Decision::Write(message(&read, "ours"), read.version))
        })
        .await
        .unwrap();
        let Resolution::Applied(Some(row), read_version) = resolution else { panic!("{resolution:?}") };
        assert_eq!(reads.load(Ordering::SeqCst), 2, "the lost write was decided again on a fresh read");
        assert_eq!(row.status_message.as_deref(), Some("ours"));
        assert_eq!(read_version, first.version + 1);
    }

    #[tokio::test]
    async fn a_row_that_always_changes_ends_contended_and_changes_nothing_of_ours() {
        let store = MemoryStore::new();
        let first = stored(&store).await;
        let (store, first) = (&store, &first);
        let resolution = read_decide_write(store, || async move {
            let read = store.get(&first.id).await?.unwrap();
            apply_one(store, message(&read, "rival")).await?;
            Ok(Decision::Write(message(&read, "ours"), ()))
        })
        .await
        .unwrap();
        assert!(matches!(resolution, Resolution::Contended));
        let row = store.get(&first.id).await.unwrap().unwrap();
        assert_eq!(row.status_message.as_deref(), Some("rival"));
        assert_eq!(row.version, first.version + MAX_CAS_RETRIES as i64);
    }

    #[tokio::test]
    async fn a_decision_to_write_nothing_writes_nothing() {
        let store = MemoryStore::new();
        let first = stored(&store).await;
        let resolution = read_decide_write(&store, || async { Ok(Decision::Done(7)) }).await.unwrap();
        assert!(matches!(resolution, Resolution::Done(7)));
        assert_eq!(store.get(&first.id).await.unwrap().unwrap().version, first.version);
    }
}
