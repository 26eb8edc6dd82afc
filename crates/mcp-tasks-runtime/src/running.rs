//! The registry of handlers running in this process, so a cancel, a sweep
//! or a shutdown can reach a handler's cancellation token at once; and each
//! handler's executor slot, which it gives back while it waits for input.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_tasks_core::{TaskId, Timestamp};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
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
    /// The lease holder its claim wrote (`{executor id}/{claim number}`):
    /// unique per claim, so every write it guards on this loses once anyone
    /// (this runtime included) has claimed the task again.
    pub(crate) holder: String,
    pub(crate) attempt: u32,
    pub(crate) max_attempts: u32,
    /// When its claim started it: the attempt history's start.
    pub(crate) started_at: Timestamp,
    reason: Mutex<Option<StopReason>>,
    abort: Mutex<Option<AbortHandle>>,
    slot: Mutex<Slot>,
}

/// A handler's share of the executor's concurrency.
#[derive(Debug, Default)]
struct Slot {
    /// Held while the handler executes; `None` while it waits for input.
    permit: Option<OwnedSemaphorePermit>,
    /// How many of its `request_input` calls are waiting (a handler may ask
    /// in parallel); the slot is taken again when the last one is answered.
    waiting: u32,
    /// The handler has returned: it takes no slot again.
    released: bool,
}

/// Locks `m`, through poisoning: nothing panics while the runtime's
/// short-lived locks are held.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl RunningHandler {
    /// A handler of `attempt` claimed as `holder`, executing in `permit`'s slot.
    pub(crate) fn new(
        holder: String,
        attempt: u32,
        max_attempts: u32,
        started_at: Timestamp,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Self {
        RunningHandler {
            token: CancellationToken::new(),
            holder,
            attempt,
            max_attempts,
            started_at,
            reason: Mutex::new(None),
            abort: Mutex::new(None),
            slot: Mutex::new(Slot { permit, waiting: 0, released: false }),
        }
    }

    /// The handler starts waiting for input: its slot goes back to the
    /// executor. Returns whether one was given back, so the caller wakes the
    /// claim loop.
    pub(crate) fn park(&self) -> bool {
        let mut slot = lock(&self.slot);
        slot.waiting += 1;
        slot.permit.take().is_some()
    }

    /// The handler's wait is over: once no other wait of it is open, it
    /// takes a slot again before it goes on, queueing behind handlers
    /// already waiting for one (the semaphore is fair) and ahead of new
    /// claims. Ends early with `false` if the handler is told to stop.
    pub(crate) async fn unpark(&self, slots: &Arc<Semaphore>) -> bool {
        {
            let mut slot = lock(&self.slot);
            slot.waiting = slot.waiting.saturating_sub(1);
            if slot.waiting > 0 || slot.permit.is_some() || slot.released {
                return true;
            }
        }
        let permit = tokio::select! {
            // The semaphore is never closed.
            permit = slots.clone().acquire_owned() => permit.ok(),
            _ = self.token.cancelled() => return false,
        };
        let mut slot = lock(&self.slot);
        // Keep it unless the handler asked again meanwhile, another wait of
        // it already took one, or it has returned.
        if slot.waiting == 0 && slot.permit.is_none() && !slot.released {
            slot.permit = permit;
        }
        true
    }

    /// Whether the handler is waiting for input now.
    pub(crate) fn is_waiting(&self) -> bool {
        lock(&self.slot).waiting > 0
    }

    /// A wait of the handler ended without an answer (it was told to stop):
    /// it takes no slot again for it.
    pub(crate) fn stop_waiting(&self) {
        let mut slot = lock(&self.slot);
        slot.waiting = slot.waiting.saturating_sub(1);
    }

    /// Gives the slot back for good (the handler has returned); returns
    /// whether it held one, so the caller wakes the claim loop.
    pub(crate) fn release_slot(&self) -> bool {
        let mut slot = lock(&self.slot);
        slot.released = true;
        slot.permit.take().is_some()
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

/// Handlers running in this process, by task and lease holder (one entry per
/// claim): a stubborn handler whose lease lapsed may still be running when
/// this process claims the task again (its next attempt, or the same attempt
/// re-asked or snoozed), and each must keep its own entry (for a cancel and
/// shutdown's hand-back).
#[derive(Debug, Default)]
pub(crate) struct Running {
    map: Mutex<HashMap<(TaskId, String), Arc<RunningHandler>>>,
    changed: Notify,
}

impl Running {
    /// Registers `handler` for its claim of `id`. The claim succeeded, so any
    /// other handler of the same task still running here has lost its
    /// lease, and is told so.
    pub(crate) fn insert(&self, id: TaskId, handler: Arc<RunningHandler>) {
        let mut map = lock(&self.map);
        for ((other, _), old) in map.iter() {
            if *other == id {
                old.stop(StopReason::LeaseLost);
            }
        }
        map.insert((id, handler.holder.clone()), handler);
    }

    /// Deregisters `handler` — only it: never another claim's handler.
    pub(crate) fn remove(&self, id: &TaskId, handler: &Arc<RunningHandler>) {
        let mut map = lock(&self.map);
        let key = (id.clone(), handler.holder.clone());
        if map.get(&key).is_some_and(|h| Arc::ptr_eq(h, handler)) {
            map.remove(&key);
        }
        drop(map);
        self.changed.notify_waiters();
    }

    /// Whether a handler of this process holds `id` as `holder`.
    pub(crate) fn holds(&self, id: &TaskId, holder: &str) -> bool {
        lock(&self.map).contains_key(&(id.clone(), holder.to_owned()))
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

    fn handler(holder: &str, attempt: u32) -> Arc<RunningHandler> {
        Arc::new(RunningHandler::new(holder.to_owned(), attempt, 3, Timestamp::default(), None))
    }

    #[test]
    fn the_first_reason_sticks() {
        let h = RunningHandler::new("e/1".into(), 1, 3, Timestamp::default(), None);
        h.stop(StopReason::CancelRequested);
        h.stop(StopReason::Shutdown);
        assert_eq!(h.reason(), Some(StopReason::CancelRequested));
        assert!(h.token.is_cancelled());
    }

    #[test]
    fn a_handler_deregisters_only_itself() {
        let running = Running::default();
        let id = TaskId::from("t");
        let first = handler("e/1", 1);
        running.insert(id.clone(), first.clone());
        // The same attempt claimed again (a snoozed or re-asked task) before
        // the first driver deregistered: the first one leaving must not drop
        // the second, and the second claim fenced the first.
        let again = handler("e/2", 1);
        running.insert(id.clone(), again.clone());
        assert_eq!(running.len(), 2, "each claim keeps its own entry");
        running.remove(&id, &first);
        assert!(running.holds(&id, "e/2"), "the newer claim stays registered");
        assert_eq!(first.reason(), Some(StopReason::LeaseLost), "a newer claim means the older lost its lease");
        // A next attempt tells the older one it lost its lease; both count.
        let next = handler("e/3", 2);
        running.insert(id.clone(), next.clone());
        assert_eq!(again.reason(), Some(StopReason::LeaseLost));
        assert_eq!(running.len(), 2);
        running.remove(&id, &again);
        assert!(running.holds(&id, "e/3") && !running.holds(&id, "e/2"));
        running.remove(&id, &next);
        assert_eq!(running.len(), 0);
    }

    #[tokio::test]
    async fn a_waiting_handler_gives_its_slot_back_and_takes_one_again() {
        let slots = Arc::new(Semaphore::new(1));
        let h =
            RunningHandler::new("e/1".into(), 1, 3, Timestamp::default(), Some(slots.clone().try_acquire_owned().unwrap()));
        assert_eq!(slots.available_permits(), 0);
        // Two parallel questions: the slot goes back at the first, comes back after the last.
        assert!(h.park());
        assert!(!h.park());
        assert_eq!(slots.available_permits(), 1);
        assert!(h.unpark(&slots).await);
        assert_eq!(slots.available_permits(), 1, "one question still open");
        assert!(h.unpark(&slots).await);
        assert_eq!(slots.available_permits(), 0, "executing again");
        h.release_slot();
        assert_eq!(slots.available_permits(), 1);
    }

    #[tokio::test]
    async fn a_stopped_handler_stops_waiting_for_a_slot() {
        let slots = Arc::new(Semaphore::new(0));
        let h = RunningHandler::new("e/1".into(), 1, 3, Timestamp::default(), None);
        h.park();
        h.stop(StopReason::CancelRequested);
        let unparked = tokio::time::timeout(std::time::Duration::from_secs(10), h.unpark(&slots)).await;
        assert_eq!(unparked, Ok(false));
    }
}
