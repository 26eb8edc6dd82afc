//! A zombie instance: `serve` is stopped with SIGSTOP while it runs tasks,
//! past its lease; the other instances take its work over and finish it;
//! then it is resumed with SIGCONT. Its handlers wake up and try to write:
//! the fence (every handler write guards on its own claim's lease holder and
//! attempt) refuses them, so every task ends exactly once, with the result of
//! the instance that took it over.

use crate::fleet_support;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use fleet_support::{Fleet, FleetConfig, count_per_task, signal};
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_postgres::testing::TestDatabase;
use serde_json::{Value, json};

const TASKS: usize = 6;
/// Long enough to be mid-work when stopped, short enough for the test.
const JOB_MS: u64 = 4000;
/// Room for a busy 2-core machine on top of the protocol's own bound.
const SLACK: Duration = Duration::from_secs(8);
/// What the runtime logs when a handler's write (or lease renewal) loses to the fence.
const REFUSALS: [&str; 3] = ["lease renewal lost", "outcome not written", "its outcome is discarded"];

/// Each task's row as the store holds it: any later write changes `version`.
async fn snapshot(pg: &tokio_postgres::Client, ids: &BTreeSet<String>) -> BTreeMap<String, (String, i64, i64, String)> {
    let rows = pg.query("SELECT id, status, version, attempt, coalesce(result, '') FROM tasks", &[]).await.unwrap();
    rows.iter()
        .filter(|r| ids.contains(&r.get::<_, String>(0)))
        .map(|r| (r.get(0), (r.get(1), r.get(2), r.get(3), r.get(4))))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_zombie_cannot_overwrite_work_taken_over() {
    let Some(db) = TestDatabase::create().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = FleetConfig::new(env!("CARGO_BIN_EXE_mcp-tasks"), db.url(), dir.path());
    let timing = config.timing;
    let fleet = tokio::task::block_in_place(|| Fleet::start(config, 3));

    // Create on instance 0: it wakes its own executor, so it runs most of them.
    let creator = TasksClient::connect(ClientOptions::new(fleet.instances[0].url())).await.unwrap();
    let mut ids = BTreeSet::new();
    for _ in 0..TASKS {
        match creator.start("counted_job", json!({"ms": JOB_MS}), &DeclineAll, &Silent).await.unwrap() {
            Started::Task(handle) => ids.insert(handle.task_id),
            other => panic!("not a task: {other:?}"),
        };
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while count_per_task(&fleet.journal(), "start").len() < TASKS {
        assert!(Instant::now() < deadline, "not every task started\n{}", fleet.logs());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Stop the instance running the most of them.
    let journal = fleet.journal();
    let mut per_pid: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for e in journal.iter().filter(|e| e.event == "start") {
        per_pid.entry(e.pid).or_default().insert(e.task.clone());
    }
    let (zombie_pid, zombie_tasks) = per_pid.into_iter().max_by_key(|(_, t)| t.len()).unwrap();
    let zombie = fleet.by_pid(zombie_pid).unwrap();
    signal(zombie_pid, "STOP").unwrap();
    let stopped_at = Instant::now();

    // A survivor answers for every task; the zombie's are taken over and finished.
    let survivor = (zombie + 1) % fleet.instances.len();
    let client = TasksClient::connect(ClientOptions::new(fleet.instances[survivor].url())).await.unwrap();
    let bound = timing.takeover_bound() + Duration::from_millis(JOB_MS) + SLACK;
    let mut finals: BTreeMap<String, Value> = BTreeMap::new();
    while finals.len() < ids.len() {
        assert!(
            stopped_at.elapsed() < bound,
            "not every task ended within {bound:?} of SIGSTOP: {finals:?}\n{}",
            fleet.logs()
        );
        let open: Vec<&String> = ids.iter().filter(|id| !finals.contains_key(*id)).collect();
        for id in open {
            let got = client.get(id).await.unwrap();
            if got.task.status().is_terminal() {
                finals.insert(id.clone(), serde_json::to_value(&got.task).unwrap());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!(
        "{} of {TASKS} tasks were on the zombie; all ended {:?} after SIGSTOP",
        zombie_tasks.len(),
        stopped_at.elapsed()
    );
    for id in &ids {
        let text = finals[id]["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert_eq!(finals[id]["status"], "completed", "{}", finals[id]);
        if zombie_tasks.contains(id) {
            assert!(
                text.starts_with("attempt 2 on pid ") && !text.ends_with(&format!(" {zombie_pid}")),
                "taken over: {text}"
            );
        }
    }

    let pg = db.connect().await;
    let before = snapshot(&pg, &ids).await;

    // Wake the zombie: each of its handlers finishes (or is stopped) and tries to write.
    signal(zombie_pid, "CONT").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let journal = fleet.journal();
        let woke: BTreeSet<String> =
            journal.iter().filter(|e| e.pid == zombie_pid && e.event != "start").map(|e| e.task.clone()).collect();
        // A handler that returned a result tried to write it: the runtime
        // must say it was refused. One stopped before it could (a fleet that
        // fences itself) has nothing to refuse.
        let finished: BTreeSet<String> =
            journal.iter().filter(|e| e.pid == zombie_pid && e.event == "finish").map(|e| e.task.clone()).collect();
        let log = fleet.instances[zombie].log_lines();
        let refused: BTreeSet<String> = zombie_tasks
            .iter()
            .filter(|id| log.iter().any(|l| l.contains(id.as_str()) && REFUSALS.iter().any(|r| l.contains(r))))
            .cloned()
            .collect();
        if woke == zombie_tasks && finished.is_subset(&refused) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the zombie's handlers did not all wake and lose: woke {woke:?}, finished {finished:?}, refused {refused:?}\n{}",
            fleet.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // One more renewal period: nothing the zombie does may change a row.
    tokio::time::sleep(timing.lease).await;
    assert_eq!(snapshot(&pg, &ids).await, before, "the zombie's late writes were refused");

    // Exactly one finish per task was written by a live claim.
    let journal = fleet.journal();
    for id in &ids {
        let finishes: Vec<_> =
            journal.iter().filter(|e| e.task == *id && e.event == "finish" && e.pid != zombie_pid).collect();
        assert_eq!(finishes.len(), 1, "task {id}: {finishes:?}");
        let text = before[id].3.clone();
        assert!(text.contains(&format!("attempt {} on pid {}", finishes[0].attempt, finishes[0].pid)), "{text}");
    }
    assert!(!zombie_tasks.is_empty());
}
