//! The poll flusher: writes the poll instants `tasks/get` buffered
//! ([`PollBuffer`]) in one call every `poll_flush_interval`, so a poll never
//! pays a write.

use std::sync::Arc;

use mcp_tasks_store::{PollBuffer, TaskStore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;
use crate::maintenance::{self, Schedule};

/// The flush pass and what it uses.
pub(crate) struct PollFlusher {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) polls: Arc<PollBuffer>,
    /// Every `poll_flush_interval`.
    pub(crate) schedule: Schedule,
}

impl PollFlusher {
    /// Writes what is buffered; returns how many instants.
    pub(crate) async fn flush_once(&self) -> Result<usize, RuntimeError> {
        Ok(self.polls.flush(self.store.as_ref()).await?)
    }

    /// Runs [`flush_once`](Self::flush_once) on its schedule until `stop`.
    pub(crate) fn spawn(self: &Arc<Self>, stop: CancellationToken) -> JoinHandle<()> {
        let flusher = self.clone();
        maintenance::spawn_pass("poll flusher", self.schedule.clone(), stop, move || {
            let flusher = flusher.clone();
            async move { flusher.flush_once().await.map(|_| ()) }
        })
    }
}
