//! The registry of handlers running in this process, so a cancel, a sweep
//! or a shutdown can reach a handler's cancellation token at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_tasks_core::TaskId;
use tokio::sync::Notify;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

/// Why a handler's token was cancelled; decides what the executor writes
/// when the handler returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// The client asked to cancel: the task ends `cancelled`.
    CancelRequested,
    /// Another executor, the reaper or triage owns the task now: write nothing.
    LeaseLost,
    /// The process is shutting down: hand the lease back, attempt unspent.
    Shutdown,
}

/// One running handler.
#[derive(Debug)]
pub(crate) struct RunningHandler {
    pub(crate) token: CancellationToken,
    pub(crate) attempt: u32,
    pub(crate) max_attempts: u32,
    reason: Mutex<Option<StopReason>>,
    abort: Mutex<Option<AbortHandle>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while these locks are held.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl RunningHandler {
    pub(crate) fn new(attempt: u32, max_attempts: u32) -> Self {
        RunningHandler {
            token: CancellationToken::new(),
            attempt,
            max_attempts,
            reason: Mutex::new(None),
            abort: Mutex::new(None),
        }
    }

    /// Cancels the token; the first reason given is the one that counts.
    pub(crate) fn stop(&self, reason: StopReason) {
        lock(&self.reason).get_or_insert(reason);
        self.token.cancel();
    }

    /// Why it was stopped, if it was.
    pub(crate) fn reason(&self) -> Option<StopReason> {
        *lock(&self.reason)
    }

    pub(crate) fn set_abort(&self, handle: AbortHandle) {
        *lock(&self.abort) = Some(handle);
    }

    /// Aborts the handler's driving task (shutdown, after the grace period).
    pub(crate) fn abort(&self) {
        if let Some(h) = lock(&self.abort).as_ref() {
            h.abort();
        }
    }
}

/// Handlers running in this process, by task and attempt. Keyed by attempt
/// too: a stubborn handler of an attempt whose lease lapsed may still be
/// running when this process claims the next attempt, and each must keep its
/// own entry (for the concurrency count, a cancel and shutdown's hand-back).
#[derive(Debug, Default)]
pub(crate) struct Running {
    map: Mutex<HashMap<(TaskId, u32), Arc<RunningHandler>>>,
    changed: Notify,
}

impl Running {
    /// Registers `handler` for its attempt of `id`; any older attempt of the
    /// same task still running here has lost its lease, and is told so.
    pub(crate) fn insert(&self, id: TaskId, handler: Arc<RunningHandler>) {
        let mut map = lock(&self.map);
        for ((other, attempt), old) in map.iter() {
            if *other == id && *attempt != handler.attempt {
                old.stop(StopReason::LeaseLost);
            }
        }
        map.insert((id, handler.attempt), handler);
    }

    /// Deregisters `handler` — only it: never another attempt's handler, nor
    /// a newer claim of the same attempt (a snoozed task claimed again).
    pub(crate) fn remove(&self, id: &TaskId, handler: &Arc<RunningHandler>) {
        let mut map = lock(&self.map);
        let key = (id.clone(), handler.attempt);
        if map.get(&key).is_some_and(|h| Arc::ptr_eq(h, handler)) {
            map.remove(&key);
        }
        drop(map);
        self.changed.notify_waiters();
    }

    /// Whether this process runs `attempt` of `id`.
    pub(crate) fn runs(&self, id: &TaskId, attempt: u32) -> bool {
        lock(&self.map).contains_key(&(id.clone(), attempt))
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.map).len()
    }

    pub(crate) fn snapshot(&self) -> Vec<(TaskId, Arc<RunningHandler>)> {
        lock(&self.map).iter().map(|((id, _), v)| (id.clone(), v.clone())).collect()
    }

    /// Stops every handler of `id` that runs here.
    pub(crate) fn stop(&self, id: &TaskId, reason: StopReason) {
        let handlers: Vec<_> = lock(&self.map).iter().filter(|((t, _), _)| t == id).map(|(_, h)| h.clone()).collect();
        for h in handlers {
            h.stop(reason);
        }
    }

    /// Waits until no handler runs.
    pub(crate) async fn wait_empty(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.len() == 0 {
                return;
            }
            changed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_sticks() {
        let h = RunningHandler::new(1, 3);
        h.stop(StopReason::CancelRequested);
        h.stop(StopReason::Shutdown);
        assert_eq!(h.reason(), Some(StopReason::CancelRequested));
        assert!(h.token.is_cancelled());
    }

    #[test]
    fn a_handler_deregisters_only_itself() {
        let running = Running::default();
        let id = TaskId::from("t");
        let first = Arc::new(RunningHandler::new(1, 3));
        running.insert(id.clone(), first.clone());
        // The same attempt claimed again (a snoozed task) before the first
        // driver deregistered: the first one leaving must not drop the second.
        let again = Arc::new(RunningHandler::new(1, 3));
        running.insert(id.clone(), again.clone());
        running.remove(&id, &first);
        assert!(running.runs(&id, 1), "the newer claim stays registered");
        assert_eq!(first.reason(), None, "the same attempt is not a lost lease");
        // A next attempt tells the older one it lost its lease; both count.
        let next = Arc::new(RunningHandler::new(2, 3));
        running.insert(id.clone(), next.clone());
        assert_eq!(again.reason(), Some(StopReason::LeaseLost));
        assert_eq!(running.len(), 2);
        running.remove(&id, &again);
        assert!(running.runs(&id, 2) && !running.runs(&id, 1));
        running.remove(&id, &next);
        assert_eq!(running.len(), 0);
    }
}
