//! The executor renews its lease at a third of its length. A renewal tells
//! the handler what other instances did: a cancel acknowledged elsewhere
//! cancels its token; a lease taken over elsewhere stops it, and its result
//! is discarded.

use crate::support;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Clock, ManualClock, Policy, TaskStatus};
use mcp_tasks_runtime::{RuntimeBuilder, ToolFailure, TriageScope};
use mcp_tasks_store::TaskStore;
use serde_json::{Value, json};
use support::*;
use tokio::sync::mpsc;

/// A runtime on `store` with a 150 ms lease (renewed every 50 ms of real time).
fn short_lease(store: &Arc<dyn TaskStore>, clock: &ManualClock) -> RuntimeBuilder {
    builder(store.clone(), clock).policy(Policy { lease_duration: Duration::from_millis(150), ..Policy::default() })
}

/// A tool whose handler waits for its cancellation token, reports it on
/// `seen`, then ends with `outcome`.
fn stops_when_cancelled(seen: mpsc::UnboundedSender<()>, outcome: Result<Value, ToolFailure>) -> Arc<FnTool> {
    FnTool::new("t", move |ctx| {
        let (seen, outcome) = (seen.clone(), outcome.clone());
        async move {
            ctx.cancellation().cancelled().await;
            let _ = seen.send(());
            outcome
        }
    })
}

#[tokio::test]
async fn renewal_extends_the_lease_and_carries_a_remote_cancel() {
    let clock = clock();
    let store = memory();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let worker = short_lease(&store, &clock)
        .tool(stops_when_cancelled(seen_tx, Err(ToolFailure::permanent("stopped"))))
        .build()
        .unwrap();
    let front = short_lease(&store, &clock).build().unwrap(); // another instance
    let id = create(&worker, "t").await;
    worker.run_due_once().await.unwrap();

    // Renewal moves the lease's expiry with the clock.
    clock.advance(Duration::from_secs(60));
    let renewed_at = clock.now();
    eventually("the lease is renewed", || {
        let store = store.clone();
        let id = id.clone();
        async move { stored(&store, &id).await.lease.is_some_and(|l| l.expires_at > renewed_at) }
    })
    .await;

    let ack = front.cancel_task(&id, None).await.unwrap().record;
    assert!(ack.cancel_requested && ack.status == TaskStatus::Working, "flagged: the handler runs elsewhere");
    tokio::time::timeout(Duration::from_secs(10), seen.recv()).await.expect("the worker's renewal delivers the cancel");
    idle(&worker).await;
    assert_eq!(status(&front, &id).await, TaskStatus::Cancelled);
}

#[tokio::test]
async fn a_lost_renewal_stops_the_handler() {
    let clock = clock();
    let store = memory();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let worker =
        short_lease(&store, &clock).tool(stops_when_cancelled(seen_tx, Ok(json!({"by": "worker"})))).build().unwrap();
    let other = short_lease(&store, &clock).tool(returning("t", json!({"by": "other"}))).build().unwrap();
    let id = create(&worker, "t").await;
    worker.run_due_once().await.unwrap();
    // Take the task over between two of the worker's renewals (every 50 ms of
    // real time): each round lapses the lease on the manual clock; a renewal
    // landing in between only means another round.
    let mut rounds = 0;
    loop {
        rounds += 1;
        assert!(rounds <= 50, "never took the lease over");
        clock.advance(Duration::from_millis(150));
        if other.triage_once(TriageScope::ExpiredLeases).await.unwrap().resumed == 1 {
            break;
        }
    }
    let taken = stored(&store, &id).await;
    tokio::time::timeout(Duration::from_secs(10), seen.recv()).await.expect("the lost renewal cancels the token");
    idle(&worker).await;
    assert_eq!(stored(&store, &id).await, taken, "the stopped handler wrote nothing");
}
