//! Buffered poll timestamps: `get_task` records here, a flusher writes them
//! in one batch, so a poll never pays a store write.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use mcp_tasks_core::{TaskId, Timestamp};
use mcp_tasks_store::{StoreError, TaskStore};

/// Latest poll instant per task, not yet written.
#[derive(Debug, Default)]
pub(crate) struct Polls {
    pending: Mutex<HashMap<TaskId, Timestamp>>,
}

impl Polls {
    fn pending(&self) -> MutexGuard<'_, HashMap<TaskId, Timestamp>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes a poll of `id` at `at` (the latest instant wins).
    pub(crate) fn record(&self, id: &TaskId, at: Timestamp) {
        let mut pending = self.pending();
        let slot = pending.entry(id.clone()).or_insert(at);
        *slot = (*slot).max(at);
    }

    /// Writes everything noted so far in one store call; on failure the
    /// polls are kept for the next flush. Returns how many were written.
    pub(crate) async fn flush(&self, store: &dyn TaskStore) -> Result<usize, StoreError> {
        let batch: Vec<(TaskId, Timestamp)> = self.pending().drain().collect();
        if batch.is_empty() {
            return Ok(0);
        }
        match store.record_polls(&batch).await {
            Ok(()) => Ok(batch.len()),
            Err(e) => {
                for (id, at) in batch {
                    self.record(&id, at);
                }
                Err(e)
            }
        }
    }
}
