//! One maintenance leader: of two runtimes on one PostgreSQL schema only the
//! leader sweeps; when it dies or loses the database the other takes over
//! once the leader's term lapses (driven by a manual clock); two leaders at
//! once still settle each task exactly once. A store no other process
//! shares always leads.

use crate::support;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{ManualClock, TaskStatus};
use mcp_tasks_postgres::testing::{CutProxy, TestDatabase};
use mcp_tasks_postgres::{PostgresOptions, PostgresStore};
use mcp_tasks_runtime::{ReapReport, Runtime, TriageReport};
use mcp_tasks_store::TaskStore;
use serde_json::json;
use support::*;

const LEASE: Duration = Duration::from_secs(15);
/// Past the orphan window (15 min) and its poll slack (112.5 s): an
/// unpolled task is due for the reaper.
const ABANDONED: Duration = Duration::from_secs(17 * 60);

async fn postgres(url: &str) -> Arc<dyn TaskStore> {
    let options = PostgresOptions {
        connect_timeout: Duration::from_secs(3),
        wait_timeout: Duration::from_secs(3),
        ..PostgresOptions::default()
    };
    Arc::new(PostgresStore::open_with(url, options).await.expect("open"))
}

fn runtime(store: Arc<dyn TaskStore>, clock: &ManualClock) -> Runtime {
    builder(store, clock).tool(returning("t", json!({}))).leader_lease(LEASE).build().expect("build")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_sweeps_and_another_takes_over_when_it_dies() {
    let Some(db) = TestDatabase::create().await else { return };
    let clock = clock();
    let a = runtime(postgres(&db.url()).await, &clock);
    let b = runtime(postgres(&db.url()).await, &clock);
    assert!(a.campaign_once().await, "the first candidate wins the term");
    assert!(!b.campaign_once().await, "the second does not");
    assert!(a.is_leader() && !b.is_leader());

    let first = create(&a, "t").await;
    clock.advance(ABANDONED);
    assert!(a.campaign_once().await, "the leader renews its own term, even a lapsed one nobody took");
    assert!(!b.campaign_once().await);
    assert_eq!(b.maintain_once().await.unwrap(), None, "the follower does not sweep");
    assert_eq!(status(&b, &first).await, TaskStatus::Working);
    let (reaped, _) = a.maintain_once().await.unwrap().expect("the leader sweeps");
    assert_eq!(reaped.orphaned, 1);
    assert_eq!(status(&b, &first).await, TaskStatus::Cancelled);

    // The leader dies without handing its term back.
    let second = create(&b, "t").await;
    drop(a);
    clock.advance(LEASE - Duration::from_millis(1));
    assert!(!b.campaign_once().await, "the dead leader's term has not lapsed yet");
    clock.advance(Duration::from_millis(1));
    assert!(b.campaign_once().await, "its term lapsed: the other takes over");
    clock.advance(ABANDONED);
    assert!(b.campaign_once().await);
    let (reaped, _) = b.maintain_once().await.unwrap().expect("the new leader sweeps");
    assert_eq!(reaped.orphaned, 1);
    assert_eq!(status(&b, &second).await, TaskStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_shuts_down_hands_over_at_once() {
    let Some(db) = TestDatabase::create().await else { return };
    let clock = clock();
    let a = runtime(postgres(&db.url()).await, &clock);
    let b = runtime(postgres(&db.url()).await, &clock);
    assert!(a.campaign_once().await);
    assert!(!b.campaign_once().await);
    a.shutdown(Duration::from_secs(1)).await;
    assert!(b.campaign_once().await, "a resigned term is free without waiting for it to lapse");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_loses_the_database_stops_and_the_other_takes_over() {
    let Some(db) = TestDatabase::create().await else { return };
    let url = db.url();
    let Some((cut, proxied)) = CutProxy::in_front_of(&url).await else { return };

    let clock = clock();
    let a = runtime(postgres(&proxied).await, &clock);
    let b = runtime(postgres(&url).await, &clock);
    assert!(a.campaign_once().await);
    let task = create(&b, "t").await;
    cut.down();
    assert!(a.campaign_once().await, "unable to renew, it keeps its term until it lapses");
    clock.advance(LEASE);
    assert!(!a.campaign_once().await, "its term lapsed and it cannot renew: it stops leading");
    assert!(!a.is_leader());
    assert_eq!(a.maintain_once().await.unwrap(), None, "a leader cut off does not sweep");
    assert!(b.campaign_once().await, "the other takes over");
    clock.advance(ABANDONED);
    assert!(b.campaign_once().await);
    assert_eq!(b.maintain_once().await.unwrap().expect("sweeps").0.orphaned, 1);
    assert_eq!(status(&b, &task).await, TaskStatus::Cancelled);
}

/// Two runtimes that both believe they lead (their clocks disagree by more
/// than the term) sweep the same tasks at once: each task is settled once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_leaders_at_once_settle_each_task_once() {
    let Some(db) = TestDatabase::create().await else { return };
    let slow = clock();
    let fast = ManualClock::new(T0.plus(LEASE * 2));
    let a = runtime(postgres(&db.url()).await, &slow);
    let b = runtime(postgres(&db.url()).await, &fast);
    assert!(a.campaign_once().await);
    assert!(b.campaign_once().await, "by B's clock A's term has lapsed");
    let mut ids = Vec::new();
    for _ in 0..40 {
        ids.push(create(&a, "t").await);
    }
    slow.advance(ABANDONED);
    fast.advance(ABANDONED);
    // Each wins a term the other's clock calls lapsed.
    assert!(a.campaign_once().await);
    assert!(b.campaign_once().await);
    assert!(a.is_leader() && b.is_leader(), "two leaders at once");
    let (ra, rb) = tokio::join!(a.maintain_once(), b.maintain_once());
    let orphaned = |r: Option<(ReapReport, TriageReport)>| r.map_or(0, |(reaped, _)| reaped.orphaned);
    let total = orphaned(ra.unwrap()) + orphaned(rb.unwrap());
    assert_eq!(total, ids.len(), "every task was settled by exactly one of the two");
    for id in &ids {
        let record = stored(a.store(), id).await;
        assert_eq!(record.status, TaskStatus::Cancelled);
        assert_eq!(record.version, 2, "one change, never two");
    }
}

#[tokio::test]
async fn a_store_no_one_shares_always_leads() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    assert!(rt.is_leader() && rt.maintain_once().await.unwrap().is_some(), "leads without campaigning");
    assert!(rt.campaign_once().await);
    clock.advance(Duration::from_secs(3600));
    let second = rt.campaign_once().await;
    assert!(second && rt.is_leader());
    assert!(rt.maintain_once().await.unwrap().is_some());
}
