//! Throughput of real `mcp-tasks serve` processes over HTTP, in one run:
//! SQLite (one instance), PostgreSQL with one instance, and PostgreSQL with
//! three instances behind HAProxy. For each: durable creations per second
//! (`tools/call` answered with a task handle, its row committed), polls per
//! second (`tasks/get`), and end-to-end tasks per second (created, claimed,
//! run and completed). Beside them, the PostgreSQL store's own creation rate
//! (no HTTP), which is what group commit alone achieves.
//!
//! ```sh
//! cargo build --release -p mcp-tasks
//! cargo run --release -p mcp-tasks --example fleet_bench   # BENCH_RUNS=3 by default
//! ```
//!
//! Every figure is the median of `BENCH_RUNS` runs, each on a fresh schema
//! (or file) and fresh processes. Clients run in this process, on the same
//! machine: their CPU is part of what is measured.

#[path = "../tests/fleet_support/mod.rs"]
mod fleet_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fleet_support::{Fleet, FleetConfig, StoreArg, Timing, haproxy_binary};
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_core::{TaskId, Timestamp};
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::{NewTask, TaskStore};
use serde_json::json;

/// Concurrent requests in flight.
const CLIENTS: usize = 64;
/// How long each timed phase runs.
const PHASE: Duration = Duration::from_secs(4);
/// Tasks per end-to-end run.
const E2E_TASKS: usize = 2_000;
/// Creations per store-level run.
const STORE_CREATES: usize = 20_000;

#[derive(Clone, Copy, Debug)]
enum Topology {
    Sqlite,
    Postgres1,
    Postgres3,
}

impl Topology {
    fn name(self) -> &'static str {
        match self {
            Topology::Sqlite => "SQLite, 1 instance",
            Topology::Postgres1 => "PostgreSQL, 1 instance",
            Topology::Postgres3 => "PostgreSQL, 3 instances + HAProxy",
        }
    }
}

/// The `mcp-tasks` binary next to this example, or `MCP_TASKS_BIN`.
fn mcp_tasks_binary() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("MCP_TASKS_BIN") {
        return path.into();
    }
    let exe = std::env::current_exe().expect("own path");
    let path = exe.parent().and_then(|examples| examples.parent()).expect("target dir").join("mcp-tasks");
    assert!(path.is_file(), "{} is missing: run `cargo build --release -p mcp-tasks` first", path.display());
    path
}

/// A running topology and the URL clients use; dropped at the end of a run.
struct Running {
    fleet: Fleet,
    url: String,
    _db: Option<TestDatabase>,
    _dir: tempfile::TempDir,
}

impl Running {
    async fn start(topology: Topology) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let db = match topology {
            Topology::Sqlite => None,
            _ => Some(TestDatabase::create().await.expect("PostgreSQL is reachable")),
        };
        let url = db.as_ref().map(TestDatabase::url).unwrap_or_default();
        let mut config = FleetConfig::new(mcp_tasks_binary(), url, dir.path());
        if matches!(topology, Topology::Sqlite) {
            config.store = StoreArg::Sqlite(dir.path().join("tasks.db"));
        }
        // Defaults for leases and sweeps: nothing lapses in a benchmark.
        config.timing = Timing {
            lease: Duration::from_secs(30),
            reaper: Duration::from_secs(30),
            leader_lease: Duration::from_secs(15),
        };
        config.journal = None;
        config.rust_log = "warn,rmcp=error,mcp_tasks::cmd::serve=info".to_owned(); // the line saying where it listens
        config.extra = vec!["--max-tasks-per-principal".into(), "0".into(), "--max-connections".into(), "4096".into()];
        let n = if matches!(topology, Topology::Postgres3) { 3 } else { 1 };
        let mut fleet = tokio::task::block_in_place(|| Fleet::start(config, n));
        let url = match topology {
            Topology::Postgres3 => {
                let haproxy = haproxy_binary().expect("haproxy is installed");
                tokio::task::block_in_place(|| fleet.balance(&haproxy))
            }
            _ => fleet.instances[0].url(),
        };
        Running { fleet, url, _db: db, _dir: dir }
    }

    /// Tasks in `status`, straight from the store.
    async fn count(&self, status: &str) -> i64 {
        match &self.fleet.config.store {
            StoreArg::Postgres(url) => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
                tokio::spawn(conn);
                client.query_one("SELECT count(*) FROM tasks WHERE status = $1", &[&status]).await.unwrap().get(0)
            }
            StoreArg::Sqlite(path) => {
                let conn = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
                conn.query_row("SELECT count(*) FROM tasks WHERE status = ?1", [status], |r| r.get(0)).unwrap()
            }
        }
    }
}

async fn clients(url: &str) -> Vec<Arc<TasksClient>> {
    let mut all = Vec::new();
    // A few clients (each its own connection pool), shared by the workers.
    for _ in 0..8 {
        all.push(Arc::new(TasksClient::connect(ClientOptions::new(url)).await.expect("connect")));
    }
    all
}

async fn create(client: &TasksClient, ms: u64) -> String {
    match client.start("counted_job", json!({"ms": ms}), &DeclineAll, &Silent).await.expect("tools/call") {
        Started::Task(handle) => handle.task_id,
        other => panic!("not a task: {other:?}"),
    }
}

/// Creations per second for [`PHASE`], and the ids created.
async fn creations(clients: &[Arc<TasksClient>]) -> (f64, Vec<String>) {
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..CLIENTS {
        let client = clients[w % clients.len()].clone();
        workers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            // Long jobs: the executors take a few and the rest stay queued.
            while started.elapsed() < PHASE {
                ids.push(create(&client, 3_600_000).await);
            }
            ids
        }));
    }
    let mut ids = Vec::new();
    for w in workers {
        ids.extend(w.await.unwrap());
    }
    (ids.len() as f64 / started.elapsed().as_secs_f64(), ids)
}

/// Polls per second for [`PHASE`] over `ids`.
async fn polls(clients: &[Arc<TasksClient>], ids: Arc<Vec<String>>) -> f64 {
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..CLIENTS {
        let (client, ids, done) = (clients[w % clients.len()].clone(), ids.clone(), done.clone());
        workers.push(tokio::spawn(async move {
            let mut n = w;
            while started.elapsed() < PHASE {
                client.get(&ids[n % ids.len()]).await.expect("tasks/get");
                done.fetch_add(1, Ordering::Relaxed);
                n += CLIENTS;
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

/// Tasks per second from the first creation to the last completion.
async fn end_to_end(running: &Running, clients: &[Arc<TasksClient>]) -> f64 {
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..CLIENTS {
        let client = clients[w % clients.len()].clone();
        let share = E2E_TASKS / CLIENTS + usize::from(w < E2E_TASKS % CLIENTS);
        workers.push(tokio::spawn(async move {
            for _ in 0..share {
                create(&client, 0).await;
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while running.count("completed").await < E2E_TASKS as i64 {
        assert!(Instant::now() < deadline, "end-to-end tasks did not complete");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    E2E_TASKS as f64 / started.elapsed().as_secs_f64()
}

/// The PostgreSQL store alone: creations per second with [`CLIENTS`] concurrent creators.
async fn store_creations() -> f64 {
    let db = TestDatabase::create().await.expect("PostgreSQL is reachable");
    let store = Arc::new(PostgresStore::open(&db.url()).await.expect("open"));
    let per = STORE_CREATES / CLIENTS;
    let started = Instant::now();
    let mut workers = Vec::new();
    for c in 0..CLIENTS {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            for i in 0..per {
                let t = Timestamp::from_secs(1_750_000_000);
                let task = NewTask {
                    id: TaskId::random(),
                    tool: "bench".into(),
                    arguments: json!({"n": c * per + i, "payload": "x".repeat(64)}),
                    principal: None,
                    idempotency_key: None,
                    trace_parent: None,
                    max_attempts: 3,
                    created_at: t,
                    deadline_at: t.plus(Duration::from_secs(1800)),
                    run_at: t,
                    status_message: None,
                    quota: None,
                    lease: None,
                };
                store.create(task).await.expect("create");
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    (per * CLIENTS) as f64 / started.elapsed().as_secs_f64()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let runs: usize = std::env::var("BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let topologies = [Topology::Sqlite, Topology::Postgres1, Topology::Postgres3];
    let mut rows = Vec::new();
    for topology in topologies {
        let (mut c, mut p, mut e) = (Vec::new(), Vec::new(), Vec::new());
        for run in 1..=runs {
            let running = Running::start(topology).await;
            let cl = clients(&running.url).await;
            for _ in 0..50 {
                create(&cl[0], 3_600_000).await; // warm-up
            }
            let (rate, ids) = creations(&cl).await;
            let stored = running.count("working").await;
            assert!(stored >= ids.len() as i64, "{stored} stored, {} acknowledged", ids.len());
            c.push(rate);
            p.push(polls(&cl, Arc::new(ids)).await);
            drop(cl);
            drop(running);
            // A fresh fleet: the long jobs above hold the executors' slots.
            let running = Running::start(topology).await;
            let cl = clients(&running.url).await;
            e.push(end_to_end(&running, &cl).await);
            eprintln!(
                "{} run {run}: creations {:.0}/s, polls {:.0}/s, end-to-end {:.0} tasks/s",
                topology.name(),
                c[run - 1],
                p[run - 1],
                e[run - 1]
            );
        }
        rows.push((topology.name(), median(c), median(p), median(e)));
    }
    let mut store = Vec::new();
    for _ in 0..runs {
        store.push(store_creations().await);
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("median of {runs} runs; {CLIENTS} requests in flight; {cores} cores; clients in-process over loopback HTTP");
    println!("{:<36} {:>14} {:>12} {:>18}", "topology", "creations/s", "polls/s", "end-to-end tasks/s");
    for (name, c, p, e) in rows {
        println!("{name:<36} {c:>14.0} {p:>12.0} {e:>18.0}");
    }
    println!(
        "{:<36} {:>14.0}   (PostgresStore::create, {CLIENTS} concurrent, no HTTP)",
        "PostgreSQL store alone",
        median(store)
    );
}
