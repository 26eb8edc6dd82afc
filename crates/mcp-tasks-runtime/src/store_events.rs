//! Wake-ups from other instances: the store's events (LISTEN/NOTIFY on
//! PostgreSQL; none on a store no other process shares) feed this process's
//! in-process wake-ups, so work created, an answer given or a cancel asked
//! through another instance reaches the executor or the handler here at
//! once, not at its next timer or lease renewal. Events are only hints:
//! each one leads to a read of the store before anything is decided.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_tasks_core::TaskId;
use mcp_tasks_store::{StoreEvent, TaskStore};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::running::{Running, StopReason};
use crate::wakeups::Wakeups;

/// What following the store's events needs.
pub(crate) struct StoreEvents {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) running: Arc<Running>,
    pub(crate) wakeups: Arc<Wakeups>,
}

impl StoreEvents {
    /// Follows the store's events until `stop`; `None` when the store
    /// announces nothing.
    pub(crate) fn spawn(self, stop: CancellationToken) -> Option<JoinHandle<()>> {
        let mut events = self.store.events()?;
        Some(tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = stop.cancelled() => return,
                    event = events.recv() => event,
                };
                match event {
                    Ok(StoreEvent::WorkAvailable) => self.wakeups.work_available(),
                    Ok(StoreEvent::TaskChanged(id)) => self.task_changed(&id).await,
                    // Missed events: look at everything once.
                    Ok(StoreEvent::Resync) | Err(RecvError::Lagged(_)) => self.resync().await,
                    Err(RecvError::Closed) => return,
                }
            }
        }))
    }

    /// A task's answers or cancel flag changed: its handlers here (running
    /// or waiting for input) look again.
    async fn task_changed(&self, id: &TaskId) {
        if !self.running.snapshot().iter().any(|(running, _)| running == id) {
            return;
        }
        // A waiting handler re-reads its answers.
        self.wakeups.answered(id);
        // A cancel acknowledged by another instance stops the handler now.
        match self.store.get(id).await {
            Ok(Some(record)) if record.cancel_requested => self.running.stop(id, StopReason::CancelRequested),
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(task = %id, error = %e, "cannot read a task another instance changed; its lease renewal will tell")
            }
        }
    }

    async fn resync(&self) {
        self.wakeups.work_available();
        let ids: HashSet<TaskId> = self.running.snapshot().into_iter().map(|(id, _)| id).collect();
        for id in ids {
            self.task_changed(&id).await;
        }
    }
}
