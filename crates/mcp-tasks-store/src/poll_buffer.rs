//! [`PollBuffer`]: poll instants gathered in memory and written in batches.
//!
//! A `tasks/get` must not pay for a write (let alone an fsync), yet the
//! orphan sweep needs to know when each task was last polled. The buffer
//! keeps the latest instant per task; the runtime flushes it on its own
//! schedule with one [`TaskStore::record_polls`] call. Instants lost in a
//! crash only make tasks look older, which triage after a restart must (and
//! does) allow for.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use mcp_tasks_core::{TaskId, Timestamp};

use crate::error::StoreError;
use crate::store::TaskStore;

/// The latest unflushed poll instant of each task.
#[derive(Debug, Default)]
pub struct PollBuffer {
    pending: Mutex<HashMap<TaskId, Timestamp>>,
}

impl PollBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        PollBuffer::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TaskId, Timestamp>> {
        // Nothing panics while holding the lock; a poisoned map is still whole.
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes that `id` was polled at `at` (no I/O). An earlier instant than
    /// one already buffered is ignored.
    pub fn record(&self, id: &TaskId, at: Timestamp) {
        let mut pending = self.lock();
        match pending.get_mut(id) {
            Some(latest) => *latest = (*latest).max(at),
            None => {
                pending.insert(id.clone(), at);
            }
        }
    }

    /// How many tasks have an unflushed poll.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing awaits a flush.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Writes every buffered instant with one `record_polls` call and returns
    /// how many tasks it covered. Polls recorded while the write is in flight
    /// wait for the next flush. If the write fails, the instants go back into
    /// the buffer (merged with newer ones) to be retried, and the error is
    /// returned.
    pub async fn flush(&self, store: &dyn TaskStore) -> Result<usize, StoreError> {
        let batch: Vec<(TaskId, Timestamp)> = std::mem::take(&mut *self.lock()).into_iter().collect();
        if batch.is_empty() {
            return Ok(0);
        }
        match store.record_polls(&batch).await {
            Ok(()) => Ok(batch.len()),
            Err(e) => {
                for (id, at) in &batch {
                    self.record(id, *at);
                }
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;
    use crate::conformance::support::{at, create, get, new_task};

    #[tokio::test]
    async fn flush_writes_the_latest_instant_per_task_once() {
        let store = MemoryStore::new();
        let a = create(&store, new_task("report", at(0))).await;
        let b = create(&store, new_task("report", at(0))).await;
        let buffer = PollBuffer::new();
        buffer.record(&a.id, at(10));
        buffer.record(&a.id, at(30));
        buffer.record(&a.id, at(20));
        buffer.record(&b.id, at(5));
        assert_eq!(buffer.len(), 2);
        assert_eq!(get(&store, &a.id).await.last_polled_at, None, "record does no I/O");

        assert_eq!(buffer.flush(&store).await.unwrap(), 2);
        assert!(buffer.is_empty());
        assert_eq!(get(&store, &a.id).await.last_polled_at, Some(at(30)));
        assert_eq!(get(&store, &b.id).await.last_polled_at, Some(at(5)));
        assert_eq!(buffer.flush(&store).await.unwrap(), 0, "nothing left to write");

        buffer.record(&a.id, at(25));
        buffer.flush(&store).await.unwrap();
        assert_eq!(get(&store, &a.id).await.last_polled_at, Some(at(30)), "the store keeps the later instant");
    }
}
