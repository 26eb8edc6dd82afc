//! The executor renews its lease at a third of its length. A renewal tells
//! the handler what other instances did: a cancel acknowledged elsewhere
//! cancels its token; a lease taken over elsewhere stops it, and its result
//! is discarded.

mod common;

use std::time::Duration;

use common::*;
use mcp_tasks_core::{Clock, Policy, TaskStatus};
use mcp_tasks_runtime::{ToolFailure, TriageScope};
use serde_json::json;
use tokio::sync::mpsc;

fn short_lease() -> Policy {
    Policy { lease_duration: Duration::from_millis(150), ..Policy::default() }
}

#[tokio::test]
async fn renewal_extends_the_lease_and_carries_a_remote_cancel() {
    let clock = clock();
    let store = memory();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let worker = builder(store.clone(), &clock)
        .policy(short_lease())
        .tool(FnTool::new("t", move |ctx| {
            let seen_tx = seen_tx.clone();
            async move {
                ctx.cancellation().cancelled().await;
                let _ = seen_tx.send(());
                Err::<serde_json::Value, _>(ToolFailure::permanent("stopped"))
            }
        }))
        .build()
        .unwrap();
    let front = builder(store.clone(), &clock).policy(short_lease()).build().unwrap(); // another instance
    let id = create(&worker, "t").await;
    worker.run_due_once().await.unwrap();

    // Renewal moves the lease's expiry with the clock.
    clock.advance(Duration::from_secs(60));
    let renewed_at = clock.now();
    eventually("the lease is renewed", || {
        let store = store.clone();
        let id = id.clone();
        async move { store.get(&id).await.unwrap().unwrap().lease.is_some_and(|l| l.expires_at > renewed_at) }
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
    let worker = builder(store.clone(), &clock)
        .policy(short_lease())
        .tool(FnTool::new("t", move |ctx| {
            let seen_tx = seen_tx.clone();
            async move {
                ctx.cancellation().cancelled().await;
                let _ = seen_tx.send(());
                Ok(json!({"by": "worker"}))
            }
        }))
        .build()
        .unwrap();
    let other = builder(store.clone(), &clock)
        .policy(short_lease())
        .tool(FnTool::new("t", |_ctx| async move { Ok(json!({"by": "other"})) }))
        .build()
        .unwrap();
    let id = create(&worker, "t").await;
    worker.run_due_once().await.unwrap();
    // Take the task over before the worker's first renewal (50 ms of real time) lands.
    clock.advance(Duration::from_millis(150));
    assert_eq!(other.triage_once(TriageScope::ExpiredLeases).await.unwrap().resumed, 1);
    let taken = store.get(&id).await.unwrap().unwrap();
    tokio::time::timeout(Duration::from_secs(10), seen.recv()).await.expect("the lost renewal cancels the token");
    idle(&worker).await;
    assert_eq!(store.get(&id).await.unwrap().unwrap(), taken, "the stopped handler wrote nothing");
}
