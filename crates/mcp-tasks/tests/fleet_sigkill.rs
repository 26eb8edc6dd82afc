//! A fleet under SIGKILL: three `serve` instances on one PostgreSQL schema
//! behind a real HAProxy. The library client and `mcp-tasks call` create
//! tasks through the balancer and poll through it; each round the instance
//! running the most tasks is SIGKILLed (then started again). Every task
//! reaches a terminal state through the survivors within lease + sweep +
//! work time; no acknowledged handle is lost; no task completes twice; a tool
//! unsafe to re-run is never started twice.
//!
//! The victim is chosen by what it runs, except in the last round, which
//! kills the maintenance leader (the one instance running the reaper and
//! lapsed-lease triage): another instance must take leadership over and
//! finish the round's tasks within the same bound.

use crate::fleet_support;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleet_support::{Fleet, FleetConfig, Guarded, count_per_task, haproxy_binary};
use mcp_tasks_client::rmcp::model::GetTaskResult;
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_server::tools::fleet::JournalEntry;
use serde_json::{Value, json};

const ROUNDS: usize = 3;
/// How long each job works: long enough to be running when its instance dies.
const JOB_MS: u64 = 3000;
const COUNTED_PER_ROUND: usize = 6;
const ONCE_ONLY_PER_ROUND: usize = 3;
const CALLS_PER_ROUND: usize = 2;
/// Room for a busy 2-core machine on top of the protocol's own bound.
const SLACK: Duration = Duration::from_secs(8);

/// A task the fleet acknowledged, and how.
#[derive(Debug, Clone)]
struct Acked {
    id: String,
    tool: &'static str,
}

fn task_json(got: &GetTaskResult) -> Value {
    serde_json::to_value(&got.task).unwrap()
}

/// Waits until every task in `ids` is terminal (polling through `client`,
/// riding out the balancer's 502s while an instance dies); `None` on timeout.
async fn all_terminal(client: &TasksClient, ids: &[String], within: Duration) -> Option<BTreeMap<String, Value>> {
    let deadline = Instant::now() + within;
    let mut done = BTreeMap::new();
    while Instant::now() < deadline {
        let open: Vec<&String> = ids.iter().filter(|id| !done.contains_key(*id)).collect();
        for id in open {
            if let Ok(got) = client.get(id).await
                && got.task.status().is_terminal()
            {
                done.insert(id.clone(), task_json(&got));
            }
        }
        if done.len() == ids.len() {
            return Some(done);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// The process running the most of this round's tasks (started, not finished).
fn pick_victim(journal: &[JournalEntry], round: &BTreeSet<String>) -> u32 {
    let mut running: BTreeMap<(String, u32, u32), u32> = BTreeMap::new();
    for e in journal.iter().filter(|e| round.contains(&e.task)) {
        let key = (e.task.clone(), e.attempt, e.pid);
        match e.event.as_str() {
            "start" => {
                running.insert(key, e.pid);
            }
            _ => {
                running.remove(&key);
            }
        }
    }
    let mut per_pid: BTreeMap<u32, usize> = BTreeMap::new();
    for pid in running.values() {
        *per_pid.entry(*pid).or_insert(0) += 1;
    }
    per_pid.into_iter().max_by_key(|(_, n)| *n).map(|(pid, _)| pid).expect("some task is running")
}

/// The instance that leads maintenance now: the holder of the leader's
/// lease row (while its term lasts on the database's clock), matched to the
/// executor id each running instance logged at its latest start.
async fn current_leader(fleet: &Fleet, db: &TestDatabase) -> Option<usize> {
    let client = db.connect().await;
    let row = client
        .query_opt(
            "SELECT holder FROM maintenance_leader WHERE expires_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        )
        .await
        .expect("read the leader's lease")?;
    let holder: String = row.get(0);
    fleet.instances.iter().position(|i| {
        i.is_running()
            && i.log_lines().iter().rev().find(|l| l.contains("start-up triage")).is_some_and(|l| l.contains(&holder))
    })
}

/// Waits (up to `within`) until some instance other than `not` leads.
async fn await_leader(fleet: &Fleet, db: &TestDatabase, not: Option<usize>, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        if let Some(i) = current_leader(fleet, db).await.filter(|i| Some(*i) != not) {
            return i;
        }
        assert!(Instant::now() < deadline, "no instance took maintenance leadership within {within:?}\n{}", fleet.logs());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn spawn_call(binary: &str, url: &str, book: &std::path::Path) -> Guarded {
    Guarded(
        Command::new(binary)
            .args(["call", url, "counted_job", "--args", &json!({"ms": JOB_MS}).to_string(), "--json"])
            .arg("--book")
            .arg(book)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run mcp-tasks call"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilled_instances_lose_no_task_and_rerun_no_unsafe_one() {
    let Some(haproxy) = haproxy_binary() else { return };
    let Some(db) = TestDatabase::create().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let binary = env!("CARGO_BIN_EXE_mcp-tasks");
    let config = FleetConfig::new(binary, db.url(), dir.path());
    let timing = config.timing;
    let mut fleet = tokio::task::block_in_place(|| Fleet::start(config, 3));
    let lb = tokio::task::block_in_place(|| fleet.balance(&haproxy));

    let mut options = ClientOptions::new(&lb);
    options.jitter_seed = Some(7);
    let client = TasksClient::connect(options).await.expect("connect through the balancer");

    let mut acked: Vec<Acked> = Vec::new();
    let mut calls = Vec::new();
    let mut victims = Vec::new();
    for round in 0..ROUNDS {
        // Every task of earlier rounds, the calls' included: this round's
        // calls are the tasks started that are in neither set.
        let before: BTreeSet<String> =
            acked.iter().map(|a| a.id.clone()).chain(fleet.journal().into_iter().map(|e| e.task)).collect();
        let mut round_ids = Vec::new();
        let tools = std::iter::repeat_n("counted_job", COUNTED_PER_ROUND)
            .chain(std::iter::repeat_n("once_only_job", ONCE_ONLY_PER_ROUND));
        for tool in tools {
            match client.start(tool, json!({"ms": JOB_MS}), &DeclineAll, &Silent).await {
                Ok(Started::Task(handle)) => {
                    round_ids.push(handle.task_id.clone());
                    acked.push(Acked { id: handle.task_id, tool });
                }
                other => panic!("round {round}: {tool} through the balancer: {other:?}\n{}", fleet.logs()),
            }
        }
        let books: Vec<std::path::PathBuf> =
            (0..CALLS_PER_ROUND).map(|n| dir.path().join(format!("book-{round}-{n}.db"))).collect();
        let round_calls: Vec<Guarded> = books.iter().map(|book| spawn_call(binary, &lb, book)).collect();

        // Wait until every task of the round (the calls' too) has started.
        let known: BTreeSet<String> = round_ids.iter().cloned().collect();
        let deadline = Instant::now() + Duration::from_secs(30);
        let running: BTreeSet<String> = loop {
            let started: BTreeSet<String> = fleet
                .journal()
                .into_iter()
                .filter(|e| e.event == "start" && !before.contains(&e.task))
                .map(|e| e.task)
                .collect();
            let by_calls = started.difference(&known).count();
            // A call's task may start on another instance (woken at once)
            // before the instance that created it has answered; killing that
            // one cuts the answer (HAProxy's 502), and the call, keyed, is
            // sent again and handed the task its first send created.
            if known.is_subset(&started) && by_calls >= CALLS_PER_ROUND {
                break started;
            }
            assert!(Instant::now() < deadline, "round {round}: not every task started: {started:?}\n{}", fleet.logs());
            tokio::time::sleep(Duration::from_millis(20)).await;
        };

        let kills_leader = round == ROUNDS - 1;
        let (victim, victim_pid) = if kills_leader {
            let leader = await_leader(&fleet, &db, None, timing.takeover_bound()).await;
            (leader, fleet.instances[leader].pid())
        } else {
            let pid = pick_victim(&fleet.journal(), &running);
            (fleet.by_pid(pid).expect("the victim is an instance"), pid)
        };
        fleet.instances[victim].kill(); // SIGKILL
        let killed_at = Instant::now();
        let journal = fleet.journal();
        let ended_on_victim: BTreeSet<&str> =
            journal.iter().filter(|e| e.pid == victim_pid && e.event != "start").map(|e| e.task.as_str()).collect();
        let orphaned: BTreeSet<&str> = journal
            .iter()
            .filter(|e| e.pid == victim_pid && e.event == "start" && !ended_on_victim.contains(e.task.as_str()))
            .map(|e| e.task.as_str())
            .collect();
        if kills_leader {
            let successor = await_leader(&fleet, &db, Some(victim), timing.takeover_bound() + SLACK).await;
            eprintln!("round {round}: leader {victim} killed; instance {successor} leads {:?} later", killed_at.elapsed());
        } else {
            victims.push((victim_pid, orphaned.len()));
        }

        // Every task of the round, the victim's included, ends through the survivors.
        let bound = timing.takeover_bound() + Duration::from_millis(JOB_MS) + SLACK;
        let ids: Vec<String> = round_ids.clone();
        let finished = all_terminal(&client, &ids, bound).await;
        let took = killed_at.elapsed();
        assert!(finished.is_some(), "round {round}: tasks not terminal within {bound:?} of the kill\n{}", fleet.logs());
        eprintln!(
            "round {round}: killed pid {victim_pid} running {} task(s); all terminal {took:?} after the kill",
            orphaned.len()
        );

        for mut call in round_calls {
            let deadline = Instant::now() + bound;
            while call.0.try_wait().unwrap().is_none() {
                assert!(Instant::now() < deadline, "round {round}: mcp-tasks call did not finish within {bound:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let mut out = String::new();
            std::io::Read::read_to_string(call.0.stdout.as_mut().unwrap(), &mut out).unwrap();
            let mut err = String::new();
            std::io::Read::read_to_string(call.0.stderr.as_mut().unwrap(), &mut err).unwrap();
            let status = call.0.wait().unwrap();
            assert!(status.success(), "mcp-tasks call failed ({status}): {out}\n{err}");
            let line: Value =
                serde_json::from_str(out.lines().next().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {out}"));
            assert_eq!(line["status"], "completed", "{line}");
            calls.push(line["taskId"].as_str().unwrap().to_owned());
        }
        tokio::task::block_in_place(|| fleet.restart(victim));
    }
    assert!(victims.iter().all(|(_, n)| *n > 0), "every victim was running tasks: {victims:?}");

    for id in &calls {
        acked.push(Acked { id: id.clone(), tool: "counted_job" });
    }
    let ids: Vec<String> = acked.iter().map(|a| a.id.clone()).collect();
    let finals = all_terminal(&client, &ids, Duration::from_secs(30)).await.expect("every acknowledged task is terminal");

    // What the database holds: exactly the acknowledged tasks, none lost, none extra.
    let pg = db.connect().await;
    let rows = pg.query("SELECT id, status FROM tasks", &[]).await.unwrap();
    let stored: BTreeMap<String, String> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let acked_ids: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(stored.keys().cloned().collect::<BTreeSet<_>>(), acked_ids, "the store holds exactly the acknowledged tasks");

    let journal = fleet.journal();
    let starts = count_per_task(&journal, "start");
    let finishes = count_per_task(&journal, "finish");
    let mut resumed = 0;
    let mut interrupted = 0;
    for a in &acked {
        let task = &finals[&a.id];
        match a.tool {
            "counted_job" => {
                assert_eq!(task["status"], "completed", "{task}");
                // Completed once: exactly one handler finished it, and the
                // stored result is that handler's.
                assert_eq!(finishes.get(&a.id), Some(&1), "task {} finished {:?} times", a.id, finishes.get(&a.id));
                let finish = journal.iter().find(|e| e.task == a.id && e.event == "finish").unwrap();
                let text = task["result"]["content"][0]["text"].as_str().unwrap_or_default();
                assert_eq!(text, format!("attempt {} on pid {}", finish.attempt, finish.pid), "{task}");
                if finish.attempt > 1 {
                    resumed += 1;
                }
            }
            "once_only_job" => {
                assert_eq!(
                    starts.get(&a.id),
                    Some(&1),
                    "unsafe-to-re-run task {} started {:?} times",
                    a.id,
                    starts.get(&a.id)
                );
                if task["status"] == "failed" {
                    let message = task["error"]["message"].as_str().unwrap_or_default();
                    assert!(message.contains("not safe to re-run"), "{task}");
                    interrupted += 1;
                } else {
                    assert_eq!(task["status"], "completed", "{task}");
                }
            }
            _ => unreachable!(),
        }
    }
    eprintln!(
        "{} tasks, {resumed} resumed on a survivor, {interrupted} unsafe ones failed instead of re-run; victims {victims:?}",
        acked.len()
    );
    assert!(resumed > 0, "some task was resumed after a kill");
    assert_eq!(stored.values().filter(|s| !matches!(s.as_str(), "completed" | "failed")).count(), 0, "{stored:?}");
}
