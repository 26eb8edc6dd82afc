//! Durable creations per second on PostgreSQL through the creations'
//! group commit, without and with a per-principal quota (which locks the
//! principals' usage rows in each batch), with the NOTIFY triggers the
//! schema always has.
//!
//! ```sh
//! cargo run --release -p mcp-tasks-postgres --example create_throughput [CREATIONS] [CREATORS]
//! ```
//!
//! Needs the PostgreSQL of `MCP_TASKS_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); uses fresh schemas.

use std::sync::Arc;
use std::time::Instant;

use mcp_tasks_core::{Clock, SystemClock, TaskId};
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::{NewTask, Quota, TaskStore};
use serde_json::json;

async fn run(
    creations: usize,
    creators: usize,
    quota: Option<Quota>,
    principals: usize,
    notify: bool,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let db = TestDatabase::create().await.ok_or("PostgreSQL is unreachable")?;
    let store = Arc::new(PostgresStore::open(&db.url()).await?);
    if !notify {
        // Only to measure what the announcement costs.
        db.connect().await.batch_execute("DROP TRIGGER tasks_notify_insert ON tasks").await?;
    }
    let started = Instant::now();
    let mut handles = Vec::new();
    for c in 0..creators {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move {
            for n in (c..creations).step_by(creators) {
                let now = SystemClock.now();
                let new = NewTask {
                    id: TaskId::random(),
                    tool: "report".into(),
                    arguments: json!({ "topic": "bench", "n": n }),
                    principal: Some(format!("principal-{}", n % principals)),
                    idempotency_key: None,
                    trace_parent: None,
                    max_attempts: 3,
                    created_at: now,
                    deadline_at: now.plus(std::time::Duration::from_secs(1800)),
                    run_at: now,
                    status_message: None,
                    quota,
                    lease: None,
                };
                store.create(new).await.expect("create");
            }
        }));
    }
    for h in handles {
        h.await?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let stats = store.create_stats();
    Ok((creations as f64 / elapsed, stats.jobs as f64 / stats.commits.max(1) as f64))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let creations: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(20_000);
    let creators: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(64);
    let quota = Quota { max_tasks: Some(u64::MAX / 2), max_argument_bytes: Some(u64::MAX / 2) };
    for (what, quota, principals, notify) in [
        ("no quota, no NOTIFY", None, 16, false),
        ("no quota", None, 16, true),
        ("quota, 16 principals", Some(quota), 16, true),
        ("quota, 1 principal", Some(quota), 1, true),
    ] {
        let (per_second, batch) = run(creations, creators, quota, principals, notify).await?;
        println!("{what:<22} {creators} creators: {per_second:>8.0} creations/s (mean batch {batch:.1})");
    }
    Ok(())
}
