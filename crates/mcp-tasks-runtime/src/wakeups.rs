//! In-process wake-ups: a handler waiting for input is woken by
//! `answer_input`, the executor by a new or requeued task. Other instances
//! fall back to re-reading the store on a timer, so a lost wake-up only
//! delays, never loses, work. A freed executor slot wakes the executor
//! only while due work may be waiting (`more_due`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_tasks_core::TaskId;
use tokio::sync::{Notify, watch};

/// Wake-up channels.
#[derive(Debug, Default)]
pub(crate) struct Wakeups {
    /// One counter per task someone waits on; bumped on every answer.
    inputs: Mutex<HashMap<TaskId, watch::Sender<u64>>>,
    /// Wakes the executor loop (a permit is kept if it is busy).
    pub(crate) executor: Arc<Notify>,
    /// Whether due work may wait that no claim has taken yet: set by every
    /// [`work_available`](Self::work_available) and by a claim that filled
    /// all its slots (there may be more), cleared as a claim starts. A freed
    /// slot wakes the executor only while it is set, so handlers finishing
    /// after the queue drained do not each run an empty claim.
    more_due: AtomicBool,
}

impl Wakeups {
    fn inputs(&self) -> MutexGuard<'_, HashMap<TaskId, watch::Sender<u64>>> {
        self.inputs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Subscribes to answers for `id`. Subscribe before reading the store:
    /// an answer landing in between still marks the subscription changed.
    pub(crate) fn subscribe(&self, id: &TaskId) -> InputSubscription<'_> {
        let receiver = self.inputs().entry(id.clone()).or_insert_with(|| watch::channel(0).0).subscribe();
        InputSubscription { wakeups: self, id: id.clone(), receiver }
    }

    /// Wakes whoever waits for answers to `id` in this process.
    pub(crate) fn answered(&self, id: &TaskId) {
        if let Some(tx) = self.inputs().get(id) {
            tx.send_modify(|n| *n += 1);
        }
    }

    /// Wakes the executor: work is due.
    pub(crate) fn work_available(&self) {
        self.more_due.store(true, Ordering::SeqCst);
        self.executor.notify_one();
    }

    /// A handler gave its executor slot back: wakes the executor if due
    /// work may be waiting for a slot.
    pub(crate) fn slot_freed(&self) {
        if self.more_due.load(Ordering::SeqCst) {
            self.executor.notify_one();
        }
    }

    /// A claim is about to read what is due: it will see every task whose
    /// [`work_available`](Self::work_available) came before this, and any
    /// later one sets the mark again.
    pub(crate) fn claim_started(&self) {
        self.more_due.store(false, Ordering::SeqCst);
    }

    /// Whether the last claim saw every due task this process knows of: no
    /// creation, retry or full claim since. Work due on another instance's
    /// account, or whose `run_at` came since, is not known here.
    pub(crate) fn queue_drained(&self) -> bool {
        !self.more_due.load(Ordering::SeqCst)
    }

    /// A claim took as many tasks as it had slots for, or failed: more may be due.
    pub(crate) fn claim_left_some(&self) {
        self.more_due.store(true, Ordering::SeqCst);
    }
}

/// A live subscription; dropping the last one for a task unsubscribes it.
#[derive(Debug)]
pub(crate) struct InputSubscription<'a> {
    wakeups: &'a Wakeups,
    id: TaskId,
    receiver: watch::Receiver<u64>,
}

impl InputSubscription<'_> {
    /// Waits for an answer notification not yet seen.
    pub(crate) async fn answered(&mut self) {
        // The sender lives in the map while we are subscribed, so this only
        // errs if the map entry was replaced; treat that as a wake-up.
        let _ = self.receiver.changed().await;
    }
}

impl Drop for InputSubscription<'_> {
    fn drop(&mut self) {
        let mut map = self.wakeups.inputs();
        // Our receiver is still alive here, so "1" means we are the last.
        if map.get(&self.id).is_some_and(|tx| tx.receiver_count() <= 1) {
            map.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the executor has a wake-up waiting.
    async fn woken(w: &Wakeups) -> bool {
        let notified = w.executor.notified();
        tokio::pin!(notified);
        std::future::poll_fn(|cx| std::task::Poll::Ready(notified.as_mut().poll(cx).is_ready())).await
    }

    #[tokio::test]
    async fn a_freed_slot_wakes_the_executor_only_while_work_may_be_due() {
        let w = Wakeups::default();
        w.work_available();
        assert!(woken(&w).await, "new work wakes it");
        w.claim_started();
        w.slot_freed();
        assert!(!woken(&w).await, "the claim saw everything due: a freed slot is no reason to claim");
        w.claim_left_some();
        w.slot_freed();
        assert!(woken(&w).await, "the claim filled its slots: a freed slot may take more");
        w.claim_started();
        w.work_available();
        w.slot_freed();
        assert!(woken(&w).await, "work that came during the claim");
    }

    #[tokio::test]
    async fn an_answer_between_subscribe_and_wait_is_not_lost() {
        let w = Wakeups::default();
        let id = TaskId::from("t");
        let mut a = w.subscribe(&id);
        let mut b = w.subscribe(&id);
        w.answered(&id);
        let wait = std::time::Duration::from_secs(5);
        tokio::time::timeout(wait, a.answered()).await.expect("a missed the answer");
        tokio::time::timeout(wait, b.answered()).await.expect("b missed the answer");
        drop(a);
        drop(b);
        assert!(w.inputs().is_empty());
    }
}
