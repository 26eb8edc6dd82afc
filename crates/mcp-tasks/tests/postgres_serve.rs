//! `mcp-tasks serve --database-url` end to end, as real processes: a task
//! created with `mcp-tasks call` completes on PostgreSQL, `mcp-tasks tasks
//! --database-url` lists it, and start-up leaves another instance's live
//! lease alone (fleet triage takes only lapsed leases).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_tasks_core::Timestamp;
use mcp_tasks_postgres::PostgresStore;
use mcp_tasks_postgres::testing::TestDatabase;
use mcp_tasks_store::conformance::support::new_task;
use mcp_tasks_store::{ClaimParams, NewTask, TaskStore};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-tasks");

/// A child process killed when the test ends, pass or fail.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

fn wall_clock() -> Timestamp {
    Timestamp::from_millis(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_on_postgres_completes_a_task_and_leaves_live_leases_alone() {
    let Some(db) = TestDatabase::create().await else { return };
    let url = db.url();
    let dir = tempfile::tempdir().unwrap();

    // Another instance is running a task: its lease is live for an hour.
    let seeded = PostgresStore::open(&url).await.expect("open");
    let now = wall_clock();
    let foreign = NewTask { deadline_at: now.plus(Duration::from_secs(3600)), ..new_task("long_running_report", now) };
    seeded.create(foreign.clone()).await.expect("create");
    let claimed = seeded
        .claim(ClaimParams {
            owner: "other-instance".into(),
            now,
            lease_expires_at: now.plus(Duration::from_secs(3600)),
            limit: 1,
            tools: None,
        })
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);

    let addr = free_addr();
    let log = dir.path().join("server.log");
    let server = Killed(
        Command::new(BIN)
            .args(["serve", "--listen", &addr.to_string(), "--tools", "demo,conformance"])
            .args(["--database-url", &url])
            .arg("--db")
            .arg(dir.path().join("unused.db"))
            .env("RUST_LOG", "warn,mcp_tasks::cmd::serve=info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start mcp-tasks serve"),
    );
    let mut server = server;
    let start = Instant::now();
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("mcp-tasks serve exited ({status}): {}", std::fs::read_to_string(&log).unwrap_or_default());
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the server did not listen within 30 s");
        std::thread::sleep(Duration::from_millis(25));
    }

    let out = Command::new(BIN)
        .args(["call", &format!("http://{addr}/mcp"), "long_running_report"])
        .args(["--args", r#"{"topic":"fleet","sections":2,"ms":100}"#, "--json"])
        .arg("--book")
        .arg(dir.path().join("client.db"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-tasks call");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}\nserver: {}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let line: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(line["status"], "completed");
    let task_id = line["taskId"].as_str().unwrap().to_owned();
    assert!(
        std::fs::read_to_string(&log).unwrap().contains("store: PostgreSQL postgres://"),
        "the server says which store it uses"
    );
    assert!(!dir.path().join("unused.db").exists(), "--database-url replaces --db");

    // /metrics: PostgreSQL's group commits (creations' and updates') and the
    // tasks by status and tool, the other instance's included.
    let (status, body) = crate::serve_metrics_cli::http_get(&addr.to_string(), "/metrics");
    assert!(status.contains(" 200 "), "{status}\n{body}");
    let commits = crate::serve_metrics_cli::sample(&body, "mcp_tasks_store_commits_total").expect("commits exported");
    let creates = crate::serve_metrics_cli::sample(&body, "mcp_tasks_store_committed_writes_total").unwrap();
    assert!(commits >= 1.0 && creates >= commits, "{commits} commits, {creates} creations\n{body}");
    let tasks = |status: &str| {
        body.lines()
            .find(|l| {
                l.starts_with("mcp_tasks_tasks{")
                    && l.contains(&format!("status=\"{status}\""))
                    && l.contains("tool=\"long_running_report\"")
            })
            .and_then(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
    };
    assert_eq!((tasks("completed"), tasks("working")), (Some(1.0), Some(1.0)), "{body}");

    // Start-up triage ran before the task above could: the other
    // instance's live lease was not taken.
    let still = seeded.get(&foreign.id).await.unwrap().expect("the foreign task");
    assert_eq!(still.lease.as_ref().map(|l| l.owner.as_str()), Some("other-instance"));
    assert_eq!((still.attempt, still.status), (1, mcp_tasks_core::TaskStatus::Working));

    let listed = Command::new(BIN)
        .args(["tasks", "--database-url", &url, "list", "--status", "completed", "--json"])
        .output()
        .expect("run mcp-tasks tasks");
    assert_eq!(listed.status.code(), Some(0), "{}", String::from_utf8_lossy(&listed.stderr));
    let tasks: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0]["id"], task_id.as_str());
    drop(server);
}
