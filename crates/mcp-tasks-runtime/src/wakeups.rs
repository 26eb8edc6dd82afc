//! In-process wake-ups: a handler waiting for input is woken by
//! `answer_input`, the executor by a new or requeued task. Other instances
//! fall back to re-reading the store on a timer, so a lost wake-up only
//! delays, never loses, work.

use std::collections::HashMap;
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

    /// Wakes the executor.
    pub(crate) fn work_available(&self) {
        self.executor.notify_one();
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
