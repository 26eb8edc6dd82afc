//! The database's clock: instances whose own clocks disagree by hours still
//! agree on "now", so a lease written by one is judged right by another.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Clock, ManualClock, SystemClock, Timestamp};
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::support::new_task;
use mcp_tasks_store::{ClaimParams, NewTask, SweepQuery, TaskStore};

const HOUR: Duration = Duration::from_secs(3600);

/// The server's clock, read directly.
async fn server_now(db: &TestDatabase) -> Timestamp {
    let ms: i64 = db
        .connect()
        .await
        .query_one("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint", &[])
        .await
        .expect("clock_timestamp")
        .get(0);
    Timestamp::from_millis(ms)
}

fn close(a: Timestamp, b: Timestamp, within: Duration) -> bool {
    a.since(b).max(b.since(a)) <= within
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skewed_local_clock_reads_the_database_time() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = PostgresStore::open(&db.url()).await.expect("open");
    // This machine's clock is an hour fast, and stands still unless told.
    let local = ManualClock::new(SystemClock.now().plus(HOUR));
    let clock = store.database_clock(Arc::new(local.clone())).await.expect("sample");
    let server = server_now(&db).await;
    assert!(
        close(clock.now(), server, Duration::from_secs(2)),
        "the database clock reads the server's time ({:?} vs {:?}), not the local one",
        clock.now(),
        server
    );
    assert!(!clock.database_is_ahead() && clock.offset() >= HOUR - Duration::from_secs(2));
    // Between samples the local clock measures elapsed time.
    let before = clock.now();
    local.advance(Duration::from_secs(10));
    assert_eq!(clock.now().since(before), Duration::from_secs(10));
    // A refresh that moves the offset back never moves `now` back.
    let high = clock.now();
    clock.refresh().await.expect("refresh");
    assert!(clock.now() >= high, "monotone across refreshes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_written_by_a_slow_instance_is_live_for_a_fast_one() {
    let Some(db) = TestDatabase::create().await else { return };
    let a = PostgresStore::open(&db.url()).await.expect("open a");
    let b = PostgresStore::open(&db.url()).await.expect("open b");
    // A's clock is an hour slow, B's an hour fast.
    let slow: Arc<dyn Clock> = Arc::new(ManualClock::new(SystemClock.now().minus(HOUR)));
    let fast: Arc<dyn Clock> = Arc::new(ManualClock::new(SystemClock.now().plus(HOUR)));
    let a_clock = a.database_clock(slow.clone()).await.expect("a's clock");
    let b_clock = b.database_clock(fast.clone()).await.expect("b's clock");

    let now = a_clock.now();
    a.create(NewTask { run_at: now, ..new_task("report", now) }).await.expect("create");
    let claimed = a
        .claim(ClaimParams {
            owner: "a/1".into(),
            now,
            lease_expires_at: now.plus(Duration::from_secs(30)),
            limit: 1,
            tools: None,
        })
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);

    let lapsed = |before: Timestamp| {
        let b = &b;
        async move { b.sweep_candidates(SweepQuery::Leased { before: Some(before), limit: 10 }).await.expect("sweep") }
    };
    assert_eq!(lapsed(fast.now()).await.len(), 1, "on its own clock B would take A's fresh lease for lapsed: the hazard");
    assert!(lapsed(b_clock.now()).await.is_empty(), "on the database's clock A's lease is live");
    assert!(close(a_clock.now(), b_clock.now(), Duration::from_secs(2)), "both read one clock");
}
