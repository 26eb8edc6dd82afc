//! The background loops `start` spawns. Each only wraps a `*_once` method on
//! a timer (River style), so tests drive the same code without timers.
//! Loops hold the runtime weakly: a runtime dropped without `shutdown`
//! does not live on in its own timers.

use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::claim_backoff::ClaimBackoff;
use crate::executor;
use crate::leader;
use crate::store_events;
use crate::shared::Shared;

pub(crate) fn spawn_all(shared: &Arc<Shared>) {
    let mut loops = shared.background.lock().unwrap_or_else(|p| p.into_inner());
    loops.push(tokio::spawn(executor_loop(Arc::downgrade(shared))));
    loops.push(leader::spawn_campaign(shared));
    loops.extend(store_events::spawn(shared));
    // Only the maintenance leader sweeps (always this process on a store
    // no other process shares).
    loops.push(every(shared, shared.policy.reaper_interval, "reaper", |s| async move {
        leader::maintain_once(&s).await.map(|_| ())
    }));
    loops.push(every(shared, shared.policy.poll_flush_interval, "poll flusher", |s| async move {
        s.polls.flush(s.store.as_ref()).await.map(|_| ()).map_err(Into::into)
    }));
}

/// Claims due work whenever woken (a local create, a freed slot, a retry) or
/// on the claim interval (retries coming due, other instances' tasks).
async fn executor_loop(weak: Weak<Shared>) {
    let mut backoff = ClaimBackoff::default();
    loop {
        let Some(shared) = weak.upgrade() else { return };
        let (stop, wake, interval) =
            (shared.background_stop.clone(), shared.wakeups.executor.clone(), shared.claim_interval);
        let pause = match executor::run_due_once(&shared).await {
            Ok(_) => {
                backoff.succeeded();
                interval
            }
            // The store is unreachable: stop claiming for a while.
            Err(e) => backoff.failed(&e, interval),
        };
        drop(shared);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = wake.notified() => {}
            _ = tokio::time::sleep(pause) => {}
        }
    }
}

fn every<F, Fut>(shared: &Arc<Shared>, period: Duration, name: &'static str, f: F) -> tokio::task::JoinHandle<()>
where
    F: Fn(Arc<Shared>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), crate::RuntimeError>> + Send,
{
    let weak = Arc::downgrade(shared);
    let stop = shared.background_stop.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(period) => {}
            }
            let Some(shared) = weak.upgrade() else { return };
            if let Err(e) = f(shared).await {
                tracing::warn!(error = %e, "{name} pass failed; will retry next tick");
            }
        }
    })
}
