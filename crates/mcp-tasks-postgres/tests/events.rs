//! The store's events on PostgreSQL: what one instance commits, another
//! hears (new work, answers, cancels; nothing for claims, renewals, a task
//! created already leased or a rolled-back change), and after its listening connection is terminated the
//! listener reconnects by itself and says to resync.

use std::time::Duration;

use mcp_tasks_core::Lease;
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::support::{at, change, claim_params, create, new_task};
use mcp_tasks_store::{Change, NewTask, StoreEvent, TaskStore};
use serde_json::json;
use tokio::sync::broadcast::Receiver;

/// The next event (bounded wait).
async fn next(events: &mut Receiver<StoreEvent>) -> StoreEvent {
    tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("an event within 10 s")
        .expect("the event source is open")
}

/// Waits for the listener to be connected (its first `Resync`).
async fn connected(events: &mut Receiver<StoreEvent>) {
    assert_eq!(next(events).await, StoreEvent::Resync, "a (re)connected listener says to resync");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_hears_what_another_commits() {
    let Some(db) = TestDatabase::create().await else { return };
    let a = PostgresStore::open(&db.url()).await.expect("open a");
    let b = PostgresStore::open(&db.url()).await.expect("open b");
    let mut events = b.events().expect("PostgreSQL announces changes");
    connected(&mut events).await;

    let task = create(&a, new_task("report", at(0))).await;
    assert_eq!(next(&mut events).await, StoreEvent::WorkAvailable, "a new task is new work");

    // A claim and a lease renewal announce nothing; an answer does.
    let claimed = a.claim(claim_params("exec-a/1", at(1), 1)).await.expect("claim");
    assert_eq!(claimed.len(), 1);
    change(
        &a,
        &task.id,
        Change {
            lease: Some(Some(Lease { owner: "exec-a/1".into(), expires_at: at(60) })),
            ..Change { now: at(2), ..Change::default() }
        },
    )
    .await;
    // A task created already leased (dispatched at creation) is no work
    // for anyone else.
    let leased = Lease { owner: "exec-a/9".into(), expires_at: at(60) };
    create(&a, NewTask { lease: Some(leased), ..new_task("report", at(2)) }).await;
    let mut answers = task.input_responses.clone();
    answers.insert("q".into(), json!("yes"));
    change(&a, &task.id, Change { input_responses: Some(answers), ..Change { now: at(3), ..Change::default() } }).await;
    assert_eq!(next(&mut events).await, StoreEvent::TaskChanged(task.id.clone()), "an answer, and nothing before it");

    // A cancel rolled back is never heard; a committed one is.
    let mut raw = db.connect().await;
    let tx = raw.transaction().await.expect("begin");
    tx.execute("UPDATE tasks SET cancel_requested = true WHERE id = $1", &[&task.id.as_str()]).await.expect("flag");
    tx.rollback().await.expect("rollback");
    change(&a, &task.id, Change { cancel_requested: Some(true), ..Change { now: at(4), ..Change::default() } }).await;
    assert_eq!(next(&mut events).await, StoreEvent::TaskChanged(task.id.clone()));

    // Released to run again (a retry): new work.
    let other = create(&a, new_task("report", at(5))).await;
    assert_eq!(next(&mut events).await, StoreEvent::WorkAvailable);
    a.claim(claim_params("exec-a/2", at(6), 1)).await.expect("claim");
    change(
        &a,
        &other.id,
        Change { lease: Some(None), run_at: Some(Some(at(7))), ..Change { now: at(6), ..Change::default() } },
    )
    .await;
    assert_eq!(next(&mut events).await, StoreEvent::WorkAvailable, "a released task is new work");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_listener_reconnects_and_says_to_resync() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = PostgresStore::open(&db.url()).await.expect("open");
    let mut events = store.events().expect("events");
    connected(&mut events).await;
    let admin = db.connect().await;
    let terminated: i64 = admin
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = $1 AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%') AS t",
            &[&db.schema()],
        )
        .await
        .expect("terminate")
        .get(0);
    assert_eq!(terminated, 1, "the listener's own connection was terminated");
    connected(&mut events).await;
    create(&store, new_task("report", at(0))).await;
    assert_eq!(next(&mut events).await, StoreEvent::WorkAvailable, "and it hears again");
}
