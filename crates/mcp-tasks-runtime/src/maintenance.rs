//! How a maintenance pass is scheduled: one loop per pass, owned by the
//! pass's own file (as River gives each maintenance service its own loop),
//! all built on [`spawn_pass`]. A loop runs its pass every `period`, earlier
//! when its trigger is pulled, and only while its gate is open; tests and
//! the study call the passes' `*_once` methods directly, without loops.
//!
//! The gate is where a "run only on the leader" rule plugs in (reaper and
//! lapsed-lease triage in a fleet); the trigger is where a wake-up source
//! beyond this process (a store-level notification) plugs in: anything
//! holding the trigger may pull it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;

/// Whether a pass may run now. Open by default.
#[derive(Clone, Default)]
pub(crate) struct Gate(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl Gate {
    /// A gate that is always open.
    pub(crate) fn open() -> Self {
        Gate(None)
    }

    /// A gate open while `is_open` says so (asked before every pass).
    pub(crate) fn when(is_open: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Gate(Some(Arc::new(is_open)))
    }

    fn is_open(&self) -> bool {
        self.0.as_ref().is_none_or(|f| f())
    }
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Gate(conditional)" } else { "Gate(open)" })
    }
}

/// When one pass's loop runs it.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    /// The wait between passes when nothing pulls the trigger.
    pub(crate) period: Duration,
    /// Pulled by whoever knows there is work: wakes the loop at once (a
    /// pull while a pass runs is kept for after it).
    pub(crate) trigger: Option<Arc<Notify>>,
    /// Asked before each pass; a closed gate skips it.
    pub(crate) gate: Gate,
    /// Run a pass at once when the loop starts, before the first wait.
    pub(crate) eager: bool,
}

impl Schedule {
    /// Every `period`, nothing else.
    pub(crate) fn every(period: Duration) -> Self {
        Schedule { period, trigger: None, gate: Gate::open(), eager: false }
    }
}

/// Spawns the loop that runs `pass` on `schedule` until `stop` fires. A
/// failed pass is logged and tried again at the next tick.
pub(crate) fn spawn_pass<F, Fut>(name: &'static str, schedule: Schedule, stop: CancellationToken, pass: F) -> JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), RuntimeError>> + Send,
{
    tokio::spawn(async move {
        let mut wait = !schedule.eager;
        loop {
            if wait {
                let pulled = async {
                    match &schedule.trigger {
                        Some(trigger) => trigger.notified().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = pulled => {}
                    _ = tokio::time::sleep(schedule.period) => {}
                }
            }
            wait = true;
            if stop.is_cancelled() {
                return;
            }
            if !schedule.gate.is_open() {
                continue;
            }
            if let Err(e) = pass().await {
                tracing::warn!(error = %e, "{name} pass failed; will retry next tick");
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    fn counting(runs: &Arc<AtomicUsize>) -> impl Fn() -> std::future::Ready<Result<(), RuntimeError>> + Send + 'static {
        let runs = runs.clone();
        move || {
            runs.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok(()))
        }
    }

    async fn until(what: &str, done: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_pulled_trigger_runs_the_pass_before_its_period() {
        let runs = Arc::new(AtomicUsize::new(0));
        let trigger = Arc::new(Notify::new());
        let stop = CancellationToken::new();
        let schedule = Schedule { trigger: Some(trigger.clone()), ..Schedule::every(Duration::from_secs(3600)) };
        let handle = spawn_pass("test", schedule, stop.clone(), counting(&runs));
        trigger.notify_one();
        until("the triggered pass", || runs.load(Ordering::SeqCst) == 1).await;
        stop.cancel();
        handle.await.unwrap();
    }

    #[tokio::test]
    async fn a_closed_gate_skips_passes_until_it_opens() {
        let runs = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(AtomicBool::new(false));
        let trigger = Arc::new(Notify::new());
        let stop = CancellationToken::new();
        let gate = {
            let open = open.clone();
            Gate::when(move || open.load(Ordering::SeqCst))
        };
        let schedule =
            Schedule { trigger: Some(trigger.clone()), gate, eager: true, ..Schedule::every(Duration::from_secs(3600)) };
        let handle = spawn_pass("test", schedule, stop.clone(), counting(&runs));
        // The eager pass and a pulled one meet a closed gate.
        trigger.notify_one();
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        open.store(true, Ordering::SeqCst);
        trigger.notify_one();
        until("the pass behind the opened gate", || runs.load(Ordering::SeqCst) == 1).await;
        stop.cancel();
        handle.await.unwrap();
    }

    #[tokio::test]
    async fn an_eager_loop_runs_at_once_and_stop_ends_it() {
        let runs = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let schedule = Schedule { eager: true, ..Schedule::every(Duration::from_secs(3600)) };
        let handle = spawn_pass("test", schedule, stop.clone(), counting(&runs));
        until("the eager pass", || runs.load(Ordering::SeqCst) == 1).await;
        stop.cancel();
        handle.await.unwrap();
    }
}
