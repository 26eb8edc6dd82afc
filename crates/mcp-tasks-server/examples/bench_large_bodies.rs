//! Run with: cargo run --release -p mcp-tasks-server --example bench_large_bodies
//!
//! What large request bodies cost the server, and what they do to everyone
//! else. 64 senders post `tools/call greet` with ~1 MB of arguments (many small values) in a loop
//! for a few seconds while one caller times small `tools/list` requests. It
//! prints the small requests' latency (alone and under the load), the CPU
//! time per large request, the peak resident memory and what stays resident
//! afterwards, and how the large requests were answered (200, or 503 when
//! the budget of bodies in flight was spent). Client and server share the
//! process; the clients send pre-built bytes, so the CPU is the server's.
//! Not a test: numbers depend on the machine.
//!
//! `BENCH_SEQUENTIAL=N` instead sends N large requests one after another and
//! exits: a small, fixed workload for `valgrind --tool=callgrind`, to count
//! instructions per request and see where they go.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use mcp_tasks_server::TaskServer;
use mcp_tasks_server::tools::ToolSet;
use serde_json::json;

const SENDERS: usize = 64;
const LOAD: Duration = Duration::from_secs(6);
const ARGUMENT_BYTES: usize = 930_000;

/// About [`ARGUMENT_BYTES`] of JSON in many small values, as real arguments
/// are (a tree of nodes costs far more to build than one long string).
fn payload() -> serde_json::Value {
    let row = |i: usize| json!({"id": i, "name": format!("item-{i}"), "tags": ["a", "b"], "score": 0.5});
    let row_bytes = row(0).to_string().len() + 1;
    serde_json::Value::Array((0..ARGUMENT_BYTES / row_bytes).map(row).collect())
}

fn meta() -> serde_json::Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}
    })
}

/// Process CPU time (user + system) so far.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // After the command name: utime is field 14, stime 15 (1-based), i.e. 11 and 12 here.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// A line of /proc/self/status in MB (VmHWM: peak resident, VmRSS: resident now).
fn memory_mb(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

async fn small_latencies(client: &reqwest::Client, url: &str, until: impl Fn() -> bool) -> Vec<Duration> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}).to_string();
    let mut latencies = Vec::new();
    while !until() {
        let started = Instant::now();
        let response = client
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/list")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
        let _ = response.bytes().await.unwrap();
        latencies.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    latencies.sort();
    latencies
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open(dir.path().join("bench.db")).unwrap());
    let server = ToolSet::Conformance.register(TaskServer::builder(store).single_node(true)).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async move {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::new();

    let sequential = std::env::var("BENCH_SEQUENTIAL").ok().and_then(|n| n.parse::<u64>().ok());
    let quiet_until = Instant::now() + if sequential.is_some() { Duration::ZERO } else { Duration::from_secs(2) };
    let alone = small_latencies(&client, &url, || Instant::now() > quiet_until).await;

    // Shared by every sender without a copy per request.
    let large = Bytes::from(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "greet", "arguments": {"name": "bench", "payload": payload()},
                          "_meta": meta()}})
        .to_string(),
    );
    if let Some(n) = sequential {
        for _ in 0..n {
            let response = client
                .post(&url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", "greet")
                .body(large.clone())
                .send()
                .await
                .unwrap();
            assert_eq!(response.status().as_u16(), 200);
        }
        let _ = stop.send(());
        let _ = serving.await;
        return;
    }
    let done = Arc::new(AtomicBool::new(false));
    let (ok, busy, other) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let cpu_before = cpu_time();
    let started = Instant::now();
    let mut senders = Vec::new();
    for _ in 0..SENDERS {
        let (client, url, large, done) = (client.clone(), url.clone(), large.clone(), done.clone());
        let (ok, busy, other) = (ok.clone(), busy.clone(), other.clone());
        senders.push(tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let response = client
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "tools/call")
                    .header("Mcp-Name", "greet")
                    .body(large.clone())
                    .send()
                    .await;
                match response.map(|r| r.status().as_u16()) {
                    Ok(200) => ok.fetch_add(1, Ordering::Relaxed),
                    Ok(503) => {
                        busy.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        0
                    }
                    _ => other.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    // The small caller is another client, with its own connections.
    let small_client = reqwest::Client::new();
    let loaded = small_latencies(&small_client, &url, || started.elapsed() > LOAD).await;
    done.store(true, Ordering::Relaxed);
    for sender in senders {
        let _ = sender.await;
    }
    let cpu = cpu_time() - cpu_before;
    let peak = memory_mb("VmHWM");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let kept = memory_mb("VmRSS");

    let served = ok.load(Ordering::Relaxed);
    println!("small tools/list alone:      median {:?}, p99 {:?}", percentile(&alone, 0.5), percentile(&alone, 0.99));
    println!(
        "small tools/list under load: median {:?}, p99 {:?} ({} samples)",
        percentile(&loaded, 0.5),
        percentile(&loaded, 0.99),
        loaded.len()
    );
    println!(
        "large bodies ({} B) from {SENDERS} senders for {LOAD:?}: {served} answered 200, {} refused 503, {} other",
        large.len(),
        busy.load(Ordering::Relaxed),
        other.load(Ordering::Relaxed)
    );
    if served > 0 {
        println!("CPU per large request served: {:.1} ms (process CPU {cpu:?})", cpu.as_secs_f64() * 1000.0 / served as f64);
    }
    println!("peak resident: {peak:.0} MB; resident 2 s after the load: {kept:.0} MB");
    let _ = stop.send(());
    let _ = serving.await;
}
