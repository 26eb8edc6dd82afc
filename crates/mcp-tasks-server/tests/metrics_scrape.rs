//! `GET /metrics` after a scripted run shows exactly the counts that run
//! produced: creations, a retry, a dead letter, an orphan cancel, a lease
//! taken over, sweeps. The clock is a `ManualClock` and every pass is driven
//! by hand (the server's loops are not started), so nothing happens that the
//! script did not do; requests go over real HTTP from a real rmcp client.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Clock, ManualClock, TaskId, Timestamp};
use mcp_tasks_runtime::metrics::names;
use mcp_tasks_server::TaskServer;
use mcp_tasks_server::metrics::names as server_names;
use mcp_tasks_server::tools::ToolSet;
use mcp_tasks_store::ClaimParams;
use rmcp::model::TaskStatus;
use serde_json::json;

use crate::common::*;

/// A sample's labels, sorted.
type Labels = BTreeMap<String, String>;

/// One scrape, parsed: `name` → (labels, value) of each sample.
struct Scrape(BTreeMap<String, Vec<(Labels, f64)>>);

impl Scrape {
    fn parse(text: &str) -> Scrape {
        let mut series: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample: {line}"));
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a value: {line}"));
            let (name, labels) = match key.split_once('{') {
                Some((name, rest)) => (name, rest.trim_end_matches('}')),
                None => (key, ""),
            };
            let labels = labels
                .split("\",")
                .filter(|l| !l.is_empty())
                .map(|l| {
                    let (k, v) = l.split_once('=').unwrap();
                    (k.to_owned(), v.trim_matches('"').to_owned())
                })
                .collect();
            series.entry(name.to_owned()).or_default().push((labels, value));
        }
        Scrape(series)
    }

    /// The value of `name` with exactly `labels` (0 when absent: a counter never incremented).
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let wanted: Labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.0.get(name).and_then(|s| s.iter().find(|(l, _)| *l == wanted)).map_or(0.0, |(_, v)| *v)
    }

    /// Whether a sample of `name` with exactly `labels` is present.
    fn has(&self, name: &str, labels: &[(&str, &str)]) -> bool {
        let wanted: Labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.0.get(name).is_some_and(|s| s.iter().any(|(l, _)| *l == wanted))
    }

    /// The sum of `name` over every label set.
    fn total(&self, name: &str) -> f64 {
        self.0.get(name).map_or(0.0, |s| s.iter().map(|(_, v)| v).sum())
    }
}

async fn scrape(base: &str) -> Scrape {
    let response = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    Scrape::parse(&response.text().await.unwrap())
}

#[tokio::test]
async fn a_scripted_run_shows_exactly_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Arc::new(mcp_tasks_sqlite::SqliteStore::open(dir.path().join("tasks.db")).unwrap());
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
    let mut policy = mcp_tasks_core::Policy::default();
    policy.retry.base_delay = Duration::from_millis(10);
    policy.retry.max_delay = Duration::from_millis(40);
    let collected = sqlite.clone();
    let builder = TaskServer::builder(sqlite.clone())
        .policy(policy.clone())
        .clock(clock.clone())
        .single_node(true)
        .runtime(|r| r.jitter_seed(1))
        // Authentication on: /metrics must answer without a token all the same.
        .auth(mcp_tasks_server::TokenMap::new([("t-alice".to_owned(), "alice".to_owned())]))
        .metrics_collector(move |metrics| {
            let stats = collected.write_stats();
            metrics.group_commits(stats.commits, stats.writes);
        });
    let server = ToolSet::Demo.register(builder).build().unwrap();
    let runtime = server.runtime().clone();
    // The router alone: no background loop runs, every pass below is the script's.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let serving = tokio::spawn(axum::serve(listener, server.router()).into_future());
    let c = client_with_token(&format!("{base}/mcp"), "t-alice").await;

    // Two creations: one fails once and completes, one never succeeds.
    let recovers = create(&c, "flaky_upstream", json!({"failures": 1, "ms": 0})).await.task.task_id;
    let dies = create(&c, "flaky_upstream", json!({"failures": 99, "ms": 0})).await.task.task_id;
    for _ in 0..3 {
        clock.advance(Duration::from_secs(1));
        runtime.run_due_once().await.unwrap();
        runtime.idle().await;
    }
    assert_eq!(get(&c, &recovers).await.unwrap().task.status(), TaskStatus::Completed);
    assert_eq!(get(&c, &dies).await.unwrap().task.status(), TaskStatus::Failed);

    // A third creation nobody runs or polls: the orphan sweep cancels it.
    let orphan = create(&c, "long_running_report", json!({"ms": 0})).await.task.task_id;
    // A fourth, claimed by an executor that then died: triage takes its lapsed lease over.
    let abandoned = create(&c, "ask_user", json!({})).await.task.task_id;
    let claimed = runtime
        .store()
        .claim(ClaimParams {
            owner: "executor-that-died/1".into(),
            now: clock.now(),
            lease_expires_at: clock.now().plus(policy.lease_duration),
            limit: 1,
            // Only it: the orphan was created at the same instant, and ties go by (random) id.
            tools: Some(vec!["ask_user".into()]),
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].id, TaskId(abandoned.clone()));
    clock.advance(policy.lease_duration + Duration::from_secs(1));
    let triaged = runtime.triage_once(mcp_tasks_runtime::TriageScope::ExpiredLeases).await.unwrap();
    assert_eq!(triaged.resumed, 1);
    // It is not run again here: cancel it, so it ends before the orphan sweep.
    c.peer().cancel_task(rmcp::model::CancelTaskParams::new(abandoned.clone())).await.unwrap();

    clock.advance(policy.retention.orphan_after + policy.retention.poll_slack() + Duration::from_secs(1));
    let reaped = runtime.reap_once().await.unwrap();
    assert_eq!((reaped.orphaned, reaped.timed_out, reaped.expired), (1, 0, 0));
    assert_eq!(
        runtime.get_task(&TaskId(orphan.clone()), Some("alice")).await.unwrap().record.status.to_string(),
        "cancelled"
    );

    let first = scrape(&base).await;
    let flaky = [("tool", "flaky_upstream")];
    assert_eq!(first.value(names::CREATED, &flaky), 2.0);
    assert_eq!(first.value(names::CREATED, &[("tool", "long_running_report")]), 1.0);
    assert_eq!(first.value(names::CREATED, &[("tool", "ask_user")]), 1.0);
    // One retry of the first, two of the second (its third attempt is its last).
    assert_eq!(first.value(names::RETRIES, &[("tool", "flaky_upstream"), ("class", "transient")]), 3.0);
    assert_eq!(first.value(names::RETRIES, &[("tool", "ask_user"), ("class", "executor_lost")]), 1.0);
    assert_eq!(first.value(names::FINISHED, &[("tool", "flaky_upstream"), ("outcome", "completed")]), 1.0);
    assert_eq!(first.value(names::FINISHED, &[("tool", "flaky_upstream"), ("outcome", "dead_lettered")]), 1.0);
    assert_eq!(first.value(names::FINISHED, &[("tool", "long_running_report"), ("outcome", "orphaned")]), 1.0);
    assert_eq!(first.value(names::FINISHED, &[("tool", "ask_user"), ("outcome", "cancelled")]), 1.0);
    assert_eq!(first.total(names::FINISHED), 4.0);
    assert_eq!(first.value(names::ORPHANS_CANCELLED, &[("tool", "long_running_report")]), 1.0);
    assert_eq!(first.value(names::LEASE_TAKEOVERS, &[("tool", "ask_user")]), 1.0);
    assert_eq!(first.value(names::TRIAGED, &[("decision", "resumed")]), 1.0);
    assert_eq!(first.total(names::LEASE_EXPIRIES), 0.0);
    assert_eq!(first.value(names::REAPER_PASSES, &[]), 1.0);
    for sweep in ["timeouts", "orphans", "expiry"] {
        assert_eq!(first.value(names::REAPER_SWEEPS, &[("sweep", sweep)]), 1.0, "{sweep}");
        assert_eq!(first.value(&format!("{}_count", names::REAPER_SWEEP_SECONDS), &[("sweep", sweep)]), 1.0);
    }
    assert_eq!(first.value(names::REAPER_SWEPT, &[("sweep", "orphans")]), 1.0);
    assert_eq!(first.value(names::REAPER_SWEPT, &[("sweep", "timeouts")]), 0.0);
    assert_eq!(first.value(names::POLLS, &flaky), 2.0);
    assert_eq!(first.value(names::DEAD_LETTERS, &[]), 1.0);
    // Tasks by status and tool.
    let tasks = |s: &Scrape, status: &str, tool: &str| s.value(names::TASKS, &[("status", status), ("tool", tool)]);
    assert_eq!(tasks(&first, "completed", "flaky_upstream"), 1.0);
    assert_eq!(tasks(&first, "failed", "flaky_upstream"), 1.0);
    assert_eq!(tasks(&first, "cancelled", "long_running_report"), 1.0);
    assert_eq!(tasks(&first, "cancelled", "ask_user"), 1.0);
    assert_eq!(first.total(names::TASKS), 4.0);
    assert!(first.has(names::TASKS, &[("status", "working"), ("tool", "flaky_upstream")]), "zeros are series too");
    // Four creations reached the store, each timed once.
    assert_eq!(first.value(&format!("{}_count", names::STORE_SECONDS), &[("operation", "create")]), 4.0);
    assert_eq!(first.total(names::STORE_ERRORS), 0.0);
    let http = format!("{}_count", server_names::HTTP_REQUEST_SECONDS);
    assert_eq!(first.value(&http, &[("method", "tools/call")]), 4.0);
    assert_eq!(first.value(&http, &[("method", "tasks/get")]), 2.0);
    assert_eq!(first.value(&http, &[("method", "tasks/cancel")]), 1.0);
    // The group-commit collector ran: the writer committed, each commit carrying at least one write.
    let commits = first.value(names::STORE_COMMITS, &[]);
    assert!(commits >= 1.0 && first.value(names::STORE_COMMITTED_WRITES, &[]) >= commits, "{commits}");

    // Past every retention: the expiry sweep deletes the four; the dead letter stays.
    clock.advance(policy.retention.completed.max(policy.retention.failed).max(policy.retention.cancelled) * 2);
    let reaped = runtime.reap_once().await.unwrap();
    assert_eq!(reaped.expired, 4);
    let second = scrape(&base).await;
    assert_eq!(second.value(names::REAPER_PASSES, &[]), 2.0);
    assert_eq!(second.value(names::REAPER_SWEPT, &[("sweep", "expiry")]), 4.0);
    assert_eq!(second.value(names::REAPER_SWEEPS, &[("sweep", "expiry")]), 2.0);
    assert_eq!(second.total(names::TASKS), 0.0);
    // A pair that emptied reads 0, not its last count.
    assert!(second.has(names::TASKS, &[("status", "completed"), ("tool", "flaky_upstream")]));
    assert_eq!(second.value(names::DEAD_LETTERS, &[]), 1.0);
    // Nothing else happened in between.
    assert_eq!(second.total(names::CREATED), 4.0);
    assert_eq!(second.total(names::FINISHED), 4.0);

    serving.abort();
}
