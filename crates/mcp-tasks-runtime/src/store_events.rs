//! Wake-ups from other instances: the store's events (LISTEN/NOTIFY on
//! PostgreSQL; none on a store no other process shares) feed this process's
//! in-process wake-ups, so work created, an answer given or a cancel asked
//! through another instance reaches the executor or the handler here at
//! once, not at its next timer or lease renewal. Events are only hints:
//! each one leads to a read of the store before anything is decided.

use std::sync::{Arc, Weak};

use mcp_tasks_core::TaskId;
use mcp_tasks_store::StoreEvent;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use crate::running::StopReason;
use crate::shared::Shared;

/// Follows the store's events until the runtime stops; `None` when the
/// store announces nothing.
pub(crate) fn spawn(shared: &Arc<Shared>) -> Option<JoinHandle<()>> {
    let mut events = shared.store.events()?;
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let stop = shared.background_stop.clone();
    Some(tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                _ = stop.cancelled() => return,
                event = events.recv() => event,
            };
            let Some(shared) = weak.upgrade() else { return };
            match event {
                Ok(StoreEvent::WorkAvailable) => shared.wakeups.work_available(),
                Ok(StoreEvent::TaskChanged(id)) => task_changed(&shared, &id).await,
                // Missed events: look at everything once.
                Ok(StoreEvent::Resync) | Err(RecvError::Lagged(_)) => resync(&shared).await,
                Err(RecvError::Closed) => return,
            }
        }
    }))
}

/// A task's answers or cancel flag changed: its handlers here (running or
/// waiting for input) look again.
async fn task_changed(shared: &Shared, id: &TaskId) {
    if !shared.running.snapshot().iter().any(|(running, _)| running == id) {
        return;
    }
    // A waiting handler re-reads its answers.
    shared.wakeups.answered(id);
    // A cancel acknowledged by another instance stops the handler now.
    match shared.store.get(id).await {
        Ok(Some(record)) if record.cancel_requested => shared.running.stop(id, StopReason::CancelRequested),
        Ok(_) => {}
        Err(e) => tracing::debug!(task = %id, error = %e, "cannot read a task another instance changed; its lease renewal will tell"),
    }
}

async fn resync(shared: &Shared) {
    shared.wakeups.work_available();
    let ids: std::collections::HashSet<TaskId> = shared.running.snapshot().into_iter().map(|(id, _)| id).collect();
    for id in ids {
        task_changed(shared, &id).await;
    }
}
