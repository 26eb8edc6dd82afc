//! Group commit: concurrent creations (and guarded updates) share
//! transactions and commits, each returns only once its row is committed,
//! and one job's failure — a conflict, or a value PostgreSQL refuses — does
//! not undo the others in its batch.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_tasks_core::TaskId;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_postgres::{GroupCommitStats, PostgresStore};
use mcp_tasks_store::conformance::support::{at, create, get, new_task};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, NewTask, StoreError, TaskStore, UpdateOutcome};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_share_commits_and_failures_stay_local() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = Arc::new(PostgresStore::open(&db.url()).await.expect("open"));
    // A connection of its own: in READ COMMITTED it sees only committed rows.
    let observer = Arc::new(db.connect().await);
    let taken = create(&*store, new_task("report", at(0))).await;
    let before = store.create_stats();
    assert_eq!(before, GroupCommitStats { commits: 1, jobs: 1 });

    let mut handles = Vec::new();
    for i in 0..256usize {
        let store = Arc::clone(&store);
        let observer = Arc::clone(&observer);
        // Every 4th create reuses a taken id and must fail alone.
        let id = if i % 4 == 0 { taken.id.clone() } else { TaskId::random() };
        handles.push(tokio::spawn(async move {
            let new = NewTask { id: id.clone(), ..new_task("report", at(i as i64)) };
            let result = store.create(new).await;
            let committed = observer
                .query_opt("SELECT 1 FROM tasks WHERE id = $1", &[&id.as_str()])
                .await
                .expect("observer read")
                .is_some();
            (i, id, result, committed)
        }));
    }
    let mut created = HashSet::new();
    for h in handles {
        let (i, id, result, committed) = h.await.unwrap();
        match result {
            Ok(c) if i % 4 != 0 => {
                assert!(c.created);
                assert!(committed, "create {i} returned before its row was committed");
                created.insert(id);
            }
            Err(StoreError::DuplicateId(dup)) if i % 4 == 0 => assert_eq!(dup, taken.id),
            other => panic!("create {i}: unexpected {other:?}"),
        }
    }
    assert_eq!(created.len(), 192);
    for id in &created {
        get(&*store, id).await;
    }
    assert_eq!(get(&*store, &taken.id).await, taken, "failed creates must not touch the existing row");
    let after = store.create_stats();
    let creates = after.jobs - before.jobs;
    let commits = after.commits - before.commits;
    assert_eq!(creates, 256, "every create is answered by a batch");
    eprintln!("group commit: {commits} commits for {creates} concurrent creates");
    assert!(commits < creates, "concurrent creates must share commits: {commits} commits for {creates} creates");
    let total = store.count_by_status().await.unwrap().values().sum::<u64>();
    assert_eq!(total, 193);
}

/// Waits until a connection of this test's schema waits on a row lock: the
/// group commit's writer is then stuck in its current batch, and whatever
/// is submitted meanwhile gathers into the next one.
async fn until_the_writer_waits_on_a_lock(observer: &tokio_postgres::Client) {
    for _ in 0..1000 {
        let waiting: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE application_name = current_schema() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .expect("pg_stat_activity")
            .get(0);
        if waiting > 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("the writer never waited on the lock the test holds");
}

/// Submits `jobs` while the writer is held, so all of them gather into one
/// batch; returns their answers once it is released.
async fn in_one_batch<T: Send + 'static>(
    held: tokio_postgres::Transaction<'_>,
    jobs: Vec<tokio::task::JoinHandle<T>>,
) -> Vec<T> {
    // On this current-thread runtime the spawned jobs run (and queue their
    // work) at the first yield, before the lock is let go.
    tokio::task::yield_now().await;
    held.commit().await.expect("release the lock");
    let mut answers = Vec::new();
    for job in jobs {
        answers.push(job.await.unwrap());
    }
    answers
}

#[tokio::test(flavor = "current_thread")]
async fn a_creation_postgresql_refuses_fails_alone_and_its_batch_commits() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = Arc::new(PostgresStore::open(&db.url()).await.expect("open"));
    create(&*store, new_task("report", at(0))).await; // the anonymous principal's usage row
    let mut observer = db.connect().await;
    let watcher = db.connect().await;
    let holder = observer.transaction().await.unwrap();
    holder.execute("SELECT 1 FROM principal_usage WHERE principal = '' FOR UPDATE", &[]).await.unwrap();
    let first = tokio::spawn({
        let store = Arc::clone(&store);
        async move { store.create(new_task("report", at(1))).await }
    });
    until_the_writer_waits_on_a_lock(&watcher).await;
    let before = store.create_stats();

    // 64 creations queue behind it; PostgreSQL refuses the 41st (a NUL byte
    // in text), which rolls back whatever batch it is in.
    let jobs = (0..64)
        .map(|i| {
            let store = Arc::clone(&store);
            let key = if i == 40 { "bad\0key".to_owned() } else { format!("key-{i}") };
            tokio::spawn(async move {
                let new = NewTask { idempotency_key: Some(key), ..new_task("report", at(2 + i)) };
                (new.id.clone(), store.create(new).await)
            })
        })
        .collect();
    let answers = in_one_batch(holder, jobs).await;
    assert!(first.await.unwrap().expect("the held creation").created);

    for (i, (id, answer)) in answers.into_iter().enumerate() {
        match answer {
            Err(StoreError::Unavailable(why)) if i == 40 => {
                assert!(why.contains("0x00"), "the refusal names the NUL byte: {why}");
                assert_eq!(store.get(&id).await.unwrap(), None, "the refused task is not stored");
            }
            Ok(created) if i != 40 => {
                assert!(created.created);
                assert_eq!(get(&*store, &id).await.id, id);
            }
            other => panic!("creation {i}: unexpected {other:?}"),
        }
    }
    let after = store.create_stats();
    assert_eq!(after.jobs - before.jobs, 65, "the held creation and the 64");
    // One batch of 64 split in halves around the refused one: the held
    // creation's commit, six halves, and no commit for the refused one.
    assert_eq!(after.commits - before.commits, 7, "{before:?} → {after:?}");
    assert_eq!(store.count_by_status().await.unwrap().values().sum::<u64>(), 65);
}

#[tokio::test(flavor = "current_thread")]
async fn concurrent_updates_share_commits_and_a_refused_one_fails_alone() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = Arc::new(PostgresStore::open(&db.url()).await.expect("open"));
    let mut tasks = Vec::new();
    for i in 0..65 {
        tasks.push(create(&*store, new_task("report", at(i))).await);
    }
    let mut observer = db.connect().await;
    let watcher = db.connect().await;
    let holder = observer.transaction().await.unwrap();
    holder.execute("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE", &[&tasks[0].id.as_str()]).await.unwrap();
    let first = tokio::spawn({
        let (store, guard) = (Arc::clone(&store), Guard::read(&tasks[0]));
        async move { store.apply(vec![GuardedUpdate::change(guard, message("held"))]).await }
    });
    until_the_writer_waits_on_a_lock(&watcher).await;
    let before = store.apply_stats();

    let jobs = tasks[1..]
        .iter()
        .enumerate()
        .map(|(i, task)| {
            let (store, id, guard) = (Arc::clone(&store), task.id.clone(), Guard::read(task));
            let text = if i == 40 { "bad\0message".to_owned() } else { format!("step {i}") };
            tokio::spawn(async move {
                let update = GuardedUpdate::change(guard, message(&text));
                // Half read the row back, half do not: both kinds share the batch.
                let answer =
                    if i % 2 == 0 { store.apply(vec![update]).await } else { store.apply_unread(vec![update]).await };
                (id, text, answer)
            })
        })
        .collect();
    let answers = in_one_batch(holder, jobs).await;
    assert!(matches!(first.await.unwrap().expect("the held update")[..], [UpdateOutcome::Applied(Some(_))]));

    for (i, (id, text, answer)) in answers.into_iter().enumerate() {
        let stored = get(&*store, &id).await;
        match answer {
            Err(StoreError::Unavailable(why)) if i == 40 => {
                assert!(why.contains("0x00"), "the refusal names the NUL byte: {why}");
                assert_eq!((stored.version, stored.status_message), (1, None), "the refused update changed nothing");
            }
            Ok(outcomes) if i != 40 => {
                assert_eq!((stored.version, stored.status_message.as_deref()), (2, Some(text.as_str())));
                match &outcomes[..] {
                    [UpdateOutcome::Applied(Some(row))] if i % 2 == 0 => assert_eq!(*row, stored),
                    [UpdateOutcome::Applied(None)] if i % 2 == 1 => {}
                    other => panic!("update {i}: {other:?}"),
                }
            }
            other => panic!("update {i}: unexpected {other:?}"),
        }
    }
    let after = store.apply_stats();
    assert_eq!(after.jobs - before.jobs, 65);
    assert_eq!(after.commits - before.commits, 7, "{before:?} → {after:?}");
}

/// A change of the status message alone.
fn message(text: &str) -> Change {
    Change { status_message: Some(Some(text.to_owned())), ..Change::default() }
}
