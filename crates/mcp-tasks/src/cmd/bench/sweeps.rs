//! Scenario 4: maintenance cost against the store's size, in this process
//! (the reaper and triage are not requests): the reaper's pass over a store
//! of N live rows of which 100 are past their deadline, and triage of
//! 10 000 lapsed leases. The passes are the runtime's own (`reap_once`,
//! `triage_once`) over the store `serve` would open.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use mcp_tasks_core::{Clock, SystemClock, TaskId};
use mcp_tasks_runtime::{Runtime, TriageScope};
use mcp_tasks_store::{ClaimParams, MemoryStore, NewTask, TaskStore};
use serde_json::json;

use super::launcher::StoreKind;
use super::measurement::{Measurement, Scenario};
use super::pg_schema::PgSchema;

/// Rows past their deadline in every reaper measurement.
pub(crate) const DUE: u64 = 100;

/// A store opened for one measurement (and the schema it lives in).
struct OpenStore {
    store: Arc<dyn TaskStore>,
    _schema: Option<PgSchema>,
}

async fn open(kind: StoreKind, database_url: Option<&str>, dir: &std::path::Path, n: usize) -> anyhow::Result<OpenStore> {
    Ok(match kind {
        StoreKind::Memory => OpenStore { store: Arc::new(MemoryStore::new()), _schema: None },
        StoreKind::Sqlite => {
            let path = dir.join(format!("sweep-{n}.db"));
            OpenStore { store: Arc::new(mcp_tasks_sqlite::SqliteStore::open(&path)?), _schema: None }
        }
        StoreKind::Postgres => {
            let schema = PgSchema::create(database_url.context("--store postgres needs --database-url")?).await?;
            let store = mcp_tasks_postgres::PostgresStore::open(&schema.url()).await?;
            OpenStore { store: Arc::new(store), _schema: Some(schema) }
        }
    })
}

/// Creates `count` live tasks, by 64 concurrent creators (group commit
/// takes them as a server would); `overdue` ones are past their deadline.
async fn seed(store: &Arc<dyn TaskStore>, count: u64, overdue: bool) -> anyhow::Result<()> {
    let now = SystemClock.now();
    let next = Arc::new(AtomicU64::new(0));
    let mut creators = Vec::new();
    for _ in 0..64 {
        let (store, next) = (store.clone(), next.clone());
        creators.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < count {
                let created_at = now.minus(Duration::from_secs(60));
                let deadline_at =
                    if overdue { now.minus(Duration::from_secs(1)) } else { now.plus(Duration::from_secs(3600)) };
                store
                    .create(NewTask {
                        id: TaskId::random(),
                        tool: "counted_job".into(),
                        arguments: json!({"ms": 3_600_000}),
                        principal: None,
                        idempotency_key: None,
                        trace_parent: None,
                        max_attempts: 3,
                        created_at,
                        deadline_at,
                        run_at: created_at,
                        status_message: None,
                        quota: None,
                        lease: None,
                    })
                    .await?;
            }
            anyhow::Ok(())
        }));
    }
    for creator in creators {
        creator.await??;
    }
    Ok(())
}

fn timed(scenario: Scenario, subject: &str, stored: u64, count: u64, elapsed: Duration) -> Measurement {
    let seconds = elapsed.as_secs_f64();
    Measurement {
        scenario,
        subject: subject.to_owned(),
        clients: None,
        stored: Some(stored),
        count,
        errors: 0,
        first_error: None,
        seconds,
        per_second: count as f64 / seconds.max(1e-9),
        latency: None,
        bytes: None,
        same_mix: None,
        one_live: None,
        peer: None,
        run_rates: Vec::new(),
        runs: 1,
    }
}

/// The reaper's pass over `stored` live rows of which [`DUE`] are overdue,
/// `runs` times (each with 100 new overdue rows); the median run.
pub(crate) async fn reaper_sweep(
    kind: StoreKind,
    database_url: Option<&str>,
    dir: &std::path::Path,
    stored: u64,
    runs: usize,
) -> anyhow::Result<Measurement> {
    let open = open(kind, database_url, dir, stored as usize).await?;
    seed(&open.store, stored - DUE, false).await?;
    let runtime = Runtime::builder(open.store.clone()).single_node(true).build()?;
    let mut all = Vec::new();
    for _ in 0..runs {
        seed(&open.store, DUE, true).await?;
        let started = Instant::now();
        let report = runtime.reap_once().await?;
        let elapsed = started.elapsed();
        if report.timed_out as u64 != DUE {
            bail!("the reaper failed {} overdue tasks of {DUE} ({report:?})", report.timed_out);
        }
        all.push(timed(Scenario::ReaperSweep, "mcp-tasks", stored, DUE, elapsed));
    }
    Ok(Measurement::median(all))
}

/// Triage of `leases` lapsed leases (claimed by an executor that then
/// vanished), until every one is settled.
pub(crate) async fn lapsed_lease_triage(
    kind: StoreKind,
    database_url: Option<&str>,
    dir: &std::path::Path,
    leases: u64,
) -> anyhow::Result<Measurement> {
    let open = open(kind, database_url, dir, 0).await?;
    seed(&open.store, leases, false).await?;
    let now = SystemClock.now();
    let mut claimed = 0u64;
    while claimed < leases {
        let batch = open
            .store
            .claim(ClaimParams {
                owner: "vanished-executor/1".into(),
                now,
                lease_expires_at: now.minus(Duration::from_secs(1)),
                limit: 1000,
                tools: None,
            })
            .await?;
        if batch.is_empty() {
            bail!("claimed {claimed} of {leases} seeded tasks");
        }
        claimed += batch.len() as u64;
    }
    let runtime = Runtime::builder(open.store.clone()).single_node(false).build()?;
    let started = Instant::now();
    let mut settled = 0u64;
    while settled < leases {
        let r = runtime.triage_once(TriageScope::ExpiredLeases).await?;
        let pass = (r.resumed + r.reasked + r.failed + r.poisoned + r.cancelled) as u64;
        if pass == 0 {
            bail!("triage settled {settled} of {leases} lapsed leases, then nothing");
        }
        settled += pass;
    }
    Ok(timed(Scenario::LeaseTriage, "mcp-tasks", leases, settled, started.elapsed()))
}
