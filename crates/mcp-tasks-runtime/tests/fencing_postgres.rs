//! Fencing on PostgreSQL: instance A's lease lapses (it stalled, or lost the
//! database), B takes the task over; A's late progress, completion and
//! failure are all refused and change nothing. And self-fencing: a handler
//! whose lease lapses while the store is unreachable is stopped.

use crate::support;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Policy, TaskStatus};
use mcp_tasks_postgres::testing::{CutProxy, TestDatabase};
use mcp_tasks_postgres::{PostgresOptions, PostgresStore};
use mcp_tasks_runtime::{CreateTask, RuntimeError, ToolFailure};
use mcp_tasks_store::TaskStore;
use serde_json::json;
use support::*;
use tokio::sync::mpsc;

async fn postgres(url: &str) -> Arc<dyn TaskStore> {
    let options = PostgresOptions {
        connect_timeout: Duration::from_secs(2),
        wait_timeout: Duration::from_secs(2),
        ..PostgresOptions::default()
    };
    Arc::new(PostgresStore::open_with(url, options).await.expect("open"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_writes_of_a_lapsed_lease_are_refused_and_change_nothing() {
    let Some(db) = TestDatabase::create().await else { return };
    let clock = clock();
    let (g, mut gate) = gate();
    let (progress_tx, mut progress) = mpsc::unbounded_channel();
    // A's handler stalls at the gate, then tries to report progress and to
    // complete or fail, as its arguments say.
    let stalling = FnTool::new("t", move |ctx| {
        let (g, progress_tx) = (g.clone(), progress_tx.clone());
        async move {
            g.pass_stubbornly(&ctx).await;
            let _ = progress_tx.send(ctx.set_status_message("late progress").await);
            if ctx.arguments()["fail"] == json!(true) {
                Err(ToolFailure::permanent("late failure"))
            } else {
                Ok(json!({ "by": "A" }))
            }
        }
    });
    let a = builder(postgres(&db.url()).await, &clock).tool(stalling).build().unwrap();
    let b = builder(postgres(&db.url()).await, &clock).tool(returning("t", json!({ "by": "B" }))).build().unwrap();
    let mut ids = Vec::new();
    for fail in [false, true] {
        ids.push(a.create_task(CreateTask::new("t", json!({ "fail": fail }))).await.unwrap().record.id);
    }
    assert_eq!(a.run_due_once().await.unwrap(), 2);
    gate.arrived().await;
    gate.arrived().await;

    // A's 30 s leases lapse; B leads, triages them and runs them itself.
    clock.advance(Duration::from_secs(30));
    assert!(b.campaign_once().await);
    let (_, triaged) = b.maintain_once().await.unwrap().expect("B leads");
    assert_eq!(triaged.resumed, 2);
    assert_eq!(run_settled(&b).await, 2);
    let mut settled = Vec::new();
    for id in &ids {
        let record = stored(b.store(), id).await;
        assert_eq!((record.status, record.attempt, &record.result), (TaskStatus::Completed, 2, &Some(json!({ "by": "B" }))));
        settled.push(record);
    }

    // A wakes up: everything it writes is refused.
    gate.open(2);
    for _ in 0..2 {
        let refused = tokio::time::timeout(Duration::from_secs(10), progress.recv()).await.unwrap().unwrap();
        assert!(matches!(refused, Err(RuntimeError::LeaseLost(_))), "late progress refused: {refused:?}");
    }
    idle(&a).await;
    for (id, before) in ids.iter().zip(&settled) {
        assert_eq!(&stored(b.store(), id).await, before, "A's late completion or failure changed nothing");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_whose_lease_lapses_while_the_store_is_gone_is_stopped() {
    let Some(db) = TestDatabase::create().await else { return };
    let url = db.url();
    let Some((cut, proxied)) = CutProxy::in_front_of(&url).await else { return };

    let clock = clock();
    // Renewals every 100 ms of real time; the lease itself lapses by the
    // manual clock only.
    let policy = Policy { lease_duration: Duration::from_millis(300), ..Policy::default() };
    let (stopped_tx, mut stopped) = mpsc::unbounded_channel();
    let (running_tx, mut running) = mpsc::unbounded_channel();
    let waiting = FnTool::new("t", move |ctx| {
        let (stopped_tx, running_tx) = (stopped_tx.clone(), running_tx.clone());
        async move {
            let _ = running_tx.send(());
            let _ = stopped_tx.send(ctx.sleep(Duration::from_secs(3600)).await.is_err());
            Ok(json!({}))
        }
    });
    let a = builder(postgres(&proxied).await, &clock).policy(policy).tool(waiting).build().unwrap();
    create(&a, "t").await;
    assert_eq!(a.run_due_once().await.unwrap(), 1);
    tokio::time::timeout(Duration::from_secs(10), running.recv()).await.unwrap();

    cut.down();
    // Renewals now fail, but the lease has not lapsed: the handler goes on.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(stopped.try_recv().is_err(), "not stopped while its lease still holds");
    clock.advance(Duration::from_millis(300));
    let was_stopped = tokio::time::timeout(Duration::from_secs(20), stopped.recv())
        .await
        .expect("the handler is stopped once its lease lapsed unrenewed")
        .unwrap();
    assert!(was_stopped, "its cancellation token fired");
}
