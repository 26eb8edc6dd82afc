//! Losing the database under load: two `serve` instances share one
//! PostgreSQL schema through a TCP proxy this test owns, while clients keep
//! creating tasks and polling them (through both instances). First every
//! backend of the test's schema is terminated (`pg_terminate_backend` by
//! `application_name`), several times; then the proxy is cut for a while, as
//! a database restart or a network cut would (connections dropped, new ones
//! refused). The shared PostgreSQL server itself is never touched.
//!
//! Meanwhile every failed request gets JSON-RPC -32603 with a message saying
//! the store is unavailable, and `/readyz` says 503; afterwards the
//! instances recover by themselves and every acknowledged task completes.

use crate::fleet_support;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fleet_support::{Fleet, FleetConfig, http_get};
use mcp_tasks_client::{ClientError, ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_postgres::testing::TestDatabase;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

const WORKERS: usize = 4;
const TERMINATIONS: usize = 3;
const CUT: Duration = Duration::from_secs(2);

/// A TCP proxy to PostgreSQL that can be cut (every connection dropped,
/// new ones refused) and restored on the same port.
struct Proxy {
    listen: SocketAddr,
    upstream: String,
    accept: Option<JoinHandle<()>>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let listen = listener.local_addr().unwrap();
        let mut proxy = Proxy { listen, upstream, accept: None, links: Arc::default() };
        proxy.serve(listener);
        proxy
    }

    fn serve(&mut self, listener: TcpListener) {
        let (upstream, links) = (self.upstream.clone(), self.links.clone());
        self.accept = Some(tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                links.lock().unwrap().push(link);
            }
        }));
    }

    /// Drops every connection and stops listening: connects are refused.
    fn cut(&mut self) {
        if let Some(accept) = self.accept.take() {
            accept.abort();
        }
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    async fn restore(&mut self) {
        let listener = TcpListener::bind(self.listen).await.expect("rebind the proxy's port");
        self.serve(listener);
    }
}

/// `url` with its `host:port` replaced; returns the new URL and the old `host:port`.
fn through(url: &str, addr: SocketAddr) -> (String, String) {
    let (scheme, rest) = url.split_once("://").expect("a postgres:// URL");
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (format!("{u}@"), h),
        None => (String::new(), authority),
    };
    let hostport = if hostport.contains(':') { hostport.to_owned() } else { format!("{hostport}:5432") };
    (format!("{scheme}://{userinfo}{addr}{tail}"), hostport)
}

/// What the load saw.
#[derive(Default)]
struct Tally {
    ok: usize,
    /// Errors that say the store is unavailable (-32603).
    unavailable: usize,
    /// Anything else: each is a failure of the test.
    unclear: Vec<String>,
    acked: Vec<String>,
}

impl Tally {
    fn error(&mut self, e: &ClientError) {
        match e {
            ClientError::Rpc { code: -32603, message, .. } if message.contains("unavailable") => self.unavailable += 1,
            other => self.unclear.push(other.to_string()),
        }
    }
}

async fn load(client: Arc<TasksClient>, stop: Arc<AtomicBool>, tally: Arc<Mutex<Tally>>) {
    while !stop.load(Ordering::Relaxed) {
        match client.start("counted_job", json!({"ms": 50}), &DeclineAll, &Silent).await {
            Ok(Started::Task(handle)) => {
                {
                    let mut t = tally.lock().unwrap();
                    t.ok += 1;
                    t.acked.push(handle.task_id.clone());
                }
                for _ in 0..2 {
                    let polled = client.get(&handle.task_id).await;
                    let mut t = tally.lock().unwrap();
                    match polled {
                        Ok(_) => t.ok += 1,
                        Err(e) => t.error(&e),
                    }
                }
            }
            Ok(other) => panic!("not a task: {other:?}"),
            Err(e) => tally.lock().unwrap().error(&e),
        }
    }
}

async fn terminate_backends(admin: &tokio_postgres::Client, application_name: &str) -> u64 {
    let rows = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
            &[&application_name],
        )
        .await
        .unwrap();
    rows.len() as u64
}

/// Status of `GET /readyz` on every instance.
fn readiness(fleet: &Fleet) -> Vec<(u16, String)> {
    fleet.instances.iter().map(|i| http_get(i.addr, "/readyz").unwrap_or((0, String::new()))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_database_under_load_gives_clear_errors_and_loses_nothing() {
    let Some(db) = TestDatabase::create().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let (url_via_proxy, upstream) = through(&db.url(), "127.0.0.1:1".parse().unwrap());
    let mut proxy = Proxy::start(upstream).await;
    let (url_via_proxy, _) = through(&url_via_proxy, proxy.listen);
    let mut config = FleetConfig::new(env!("CARGO_BIN_EXE_mcp-tasks"), url_via_proxy, dir.path());
    // Outages may cost attempts (a lost outcome write is a lapsed lease); keep them from ending in poison.
    config.extra = vec!["--max-attempts".into(), "20".into()];
    let fleet = tokio::task::block_in_place(|| Fleet::start(config, 2));

    let admin = db.connect().await; // not through the proxy: it survives the cut
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut workers = Vec::new();
    for n in 0..WORKERS {
        let client = Arc::new(TasksClient::connect(ClientOptions::new(fleet.instances[n % 2].url())).await.unwrap());
        workers.push(tokio::spawn(load(client, stop.clone(), tally.clone())));
    }
    let ok_since = |tally: &Arc<Mutex<Tally>>| tally.lock().unwrap().ok;

    // Phase 1: every backend of the schema terminated, several times.
    let mut terminated = 0;
    for _ in 0..TERMINATIONS {
        tokio::time::sleep(Duration::from_millis(700)).await;
        terminated += terminate_backends(&admin, db.schema()).await;
    }
    assert!(terminated >= TERMINATIONS as u64, "the instances' backends were terminated ({terminated})");

    // Phase 2: the database is gone for a while.
    tokio::time::sleep(Duration::from_millis(700)).await;
    proxy.cut();
    let cut_at = Instant::now();
    let before_cut = tally.lock().unwrap().unavailable;
    let mut unready = Vec::new();
    while cut_at.elapsed() < CUT {
        unready.extend(readiness(&fleet).into_iter().filter(|(s, _)| *s == 503));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let during_cut = tally.lock().unwrap().unavailable - before_cut;
    proxy.restore().await;

    // Recovery by itself: requests succeed again and /readyz says 200.
    let restored_at = Instant::now();
    let ok_before = ok_since(&tally);
    loop {
        let ready = readiness(&fleet);
        if ok_since(&tally) > ok_before + 20 && ready.iter().all(|(s, _)| *s == 200) {
            break;
        }
        assert!(restored_at.elapsed() < Duration::from_secs(30), "no recovery: {ready:?}\n{}", fleet.logs());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let recovered_in = restored_at.elapsed();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }

    let tally = std::mem::take(&mut *tally.lock().unwrap());
    assert!(tally.unclear.is_empty(), "every error must say the store is unavailable: {:?}", tally.unclear);
    assert!(during_cut > 0, "requests during the cut failed with -32603 (got {} such errors in all)", tally.unavailable);
    assert!(
        unready.iter().all(|(_, body)| body.contains("unavailable")) && !unready.is_empty(),
        "/readyz said 503 with the cause during the cut: {unready:?}"
    );
    eprintln!(
        "{} ok, {} unavailable (-32603, {during_cut} during the {CUT:?} cut), {} acknowledged; {terminated} backends terminated; recovered {recovered_in:?} after the cut",
        tally.ok,
        tally.unavailable,
        tally.acked.len()
    );

    // Nothing acknowledged is lost: every acknowledged task completes.
    let client = TasksClient::connect(ClientOptions::new(fleet.instances[0].url())).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pending: Vec<String> = tally.acked.clone();
    while !pending.is_empty() {
        assert!(
            Instant::now() < deadline,
            "{} acknowledged tasks did not complete: {:?}\n{}",
            pending.len(),
            &pending[..pending.len().min(5)],
            fleet.logs()
        );
        let mut still = Vec::new();
        for id in pending {
            let got = client.get(&id).await.unwrap_or_else(|e| panic!("acknowledged task {id}: {e}"));
            if got.task.status().is_terminal() {
                let task = serde_json::to_value(&got.task).unwrap();
                assert_eq!(task["status"], "completed", "{task}");
            } else {
                still.push(id);
            }
        }
        pending = still;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let stored: i64 = admin.query_one("SELECT count(*) FROM tasks", &[]).await.unwrap().get(0);
    assert!(stored >= tally.acked.len() as i64, "{stored} stored, {} acknowledged", tally.acked.len());
}
