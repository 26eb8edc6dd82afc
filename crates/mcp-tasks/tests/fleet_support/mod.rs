//! A fleet of real `mcp-tasks serve --database-url` processes on one
//! PostgreSQL schema, optionally behind a real HAProxy that round-robins
//! `/mcp` across them and health-checks `/readyz`. Everything started here is
//! killed when its guard drops, pass or fail.
//!
//! Shared by the fleet tests and the fleet examples (which pass the path of
//! the `mcp-tasks` binary themselves).
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use mcp_tasks_server::tools::fleet::{JOURNAL_ENV, JournalEntry};

/// How long a process gets to come up (generous: CI has 2 busy cores).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The fleet's timing: short leases and sweeps, so takeovers happen within
/// seconds. Written into a `--config` policy file.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// How long an executor's lease lasts unless renewed (renewed at a third).
    pub lease: Duration,
    /// How often the leader's reaper sweeps (and triages lapsed leases).
    pub reaper: Duration,
    /// The maintenance leader's term (`serve --leader-lease`), renewed every third.
    pub leader_lease: Duration,
}

impl Timing {
    /// Short enough for tests, long enough that a busy 2-core machine does
    /// not let a live instance's lease lapse (it renews every 2/3 s).
    pub const SHORT: Timing =
        Timing { lease: Duration::from_secs(2), reaper: Duration::from_millis(500), leader_lease: Duration::from_secs(3) };

    /// The longest a lapsed task may wait before a survivor resumes it: the
    /// lease runs out, then the leader's sweep notices, then a claim picks it
    /// up; when the leader itself died, its successor first waits out the
    /// term and wins the next campaign (a third of the term later at most).
    pub fn takeover_bound(&self) -> Duration {
        self.lease + self.reaper + mcp_tasks_runtime::DEFAULT_CLAIM_INTERVAL + self.leader_lease + self.leader_lease / 3
    }
}

/// Whether HAProxy may be missing here: never under CI.
fn must_have_haproxy() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The `haproxy` binary, or `None` (after printing why) when it is missing
/// outside CI. Under `CI=true` a missing HAProxy fails the test.
pub fn haproxy_binary() -> Option<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")]);
    for dir in candidates {
        let path = dir.join("haproxy");
        if path.is_file() {
            return Some(path);
        }
    }
    let message = "haproxy is not installed (apt-get install -y haproxy; .ci/run installs it)";
    assert!(!must_have_haproxy(), "{message}");
    eprintln!("skipping: {message}");
    None
}

/// A free loopback port (bound, then released: the caller binds it next).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A child process killed (SIGKILL, after SIGCONT in case it was stopped)
/// when dropped.
pub struct Guarded(pub Child);

impl Drop for Guarded {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = Command::new("kill").arg("-CONT").arg(self.0.id().to_string()).stderr(Stdio::null()).status();
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends `kill -SIGNAL pid`.
pub fn signal(pid: u32, name: &str) -> std::io::Result<()> {
    let status = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status()?;
    if status.success() { Ok(()) } else { Err(std::io::Error::other(format!("kill -{name} {pid}: {status}"))) }
}

/// One `mcp-tasks serve --database-url` process.
pub struct Instance {
    process: Option<Guarded>,
    /// `127.0.0.1:PORT`: the same across restarts.
    pub addr: SocketAddr,
    /// Every line it wrote to stderr, across restarts.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Instance {
    /// The instance's own `/mcp` URL (not through the balancer).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The process id of the running process.
    pub fn pid(&self) -> u32 {
        self.process.as_ref().expect("the instance runs").0.id()
    }

    /// Whether a process runs (it may be stopped).
    pub fn is_running(&self) -> bool {
        self.process.is_some()
    }

    /// SIGKILLs it and waits for it to be gone.
    pub fn kill(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.0.kill().expect("SIGKILL");
            p.0.wait().expect("reaped");
        }
    }

    /// Its stderr so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// Where the instances keep their tasks.
#[derive(Debug, Clone)]
pub enum StoreArg {
    /// `--database-url`: a PostgreSQL URL every instance shares (with `search_path`).
    Postgres(String),
    /// `--db`: a SQLite file (one instance only: `serve` locks it).
    Sqlite(PathBuf),
}

/// What each instance is started with.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// The `mcp-tasks` binary.
    pub binary: PathBuf,
    /// The task store.
    pub store: StoreArg,
    /// Lease and sweep timing.
    pub timing: Timing,
    /// Where the `fleet` tools journal what they do; `None`: no journal.
    pub journal: Option<PathBuf>,
    /// A directory for config files and logs.
    pub dir: PathBuf,
    /// More `serve` flags.
    pub extra: Vec<String>,
    /// `RUST_LOG` for every instance; it must keep `mcp_tasks::cmd::serve=info`
    /// (the line saying where the instance listens).
    pub rust_log: String,
}

impl FleetConfig {
    /// A config for `binary` on `database_url`, files under `dir`.
    pub fn new(binary: impl Into<PathBuf>, database_url: impl Into<String>, dir: &Path) -> Self {
        FleetConfig {
            binary: binary.into(),
            store: StoreArg::Postgres(database_url.into()),
            timing: Timing::SHORT,
            journal: Some(dir.join("journal.jsonl")),
            dir: dir.to_path_buf(),
            extra: Vec::new(),
            rust_log: "warn,rmcp=error,mcp_tasks::cmd::serve=info,mcp_tasks_runtime=info".to_owned(),
        }
    }

    fn policy_file(&self) -> PathBuf {
        let path = self.dir.join("fleet-policy.toml");
        let text = format!(
            "lease_duration = \"{}ms\"\nreaper_interval = \"{}ms\"\n",
            self.timing.lease.as_millis(),
            self.timing.reaper.as_millis()
        );
        std::fs::write(&path, text).expect("write the policy file");
        path
    }
}

/// N instances on one schema, and perhaps HAProxy in front of them.
pub struct Fleet {
    pub config: FleetConfig,
    pub instances: Vec<Instance>,
    /// The balancer, when started with [`Fleet::balance`].
    pub balancer: Option<Balancer>,
}

impl Fleet {
    /// Starts `n` instances, each on a port of its own, and waits until each
    /// answers `/readyz` with 200.
    pub fn start(config: FleetConfig, n: usize) -> Fleet {
        let mut instances = Vec::new();
        for _ in 0..n {
            let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
            let mut instance = Instance { process: None, addr, log: Arc::new(Mutex::new(Vec::new())) };
            launch(&config, &mut instance);
            instances.push(instance);
        }
        for instance in &instances {
            wait_ready(instance.addr, START_TIMEOUT);
        }
        Fleet { config, instances, balancer: None }
    }

    /// Starts HAProxy round-robining across every instance; returns its `/mcp` URL.
    pub fn balance(&mut self, haproxy: &Path) -> String {
        let backends: Vec<SocketAddr> = self.instances.iter().map(|i| i.addr).collect();
        let balancer = Balancer::start(haproxy, &self.config.dir, &backends);
        let url = balancer.url();
        self.balancer = Some(balancer);
        url
    }

    /// Starts instance `i` again on its own port (after [`Instance::kill`]).
    pub fn restart(&mut self, i: usize) {
        assert!(!self.instances[i].is_running(), "instance {i} still runs");
        launch(&self.config, &mut self.instances[i]);
        wait_ready(self.instances[i].addr, START_TIMEOUT);
    }

    /// The instance whose process is `pid`.
    pub fn by_pid(&self, pid: u32) -> Option<usize> {
        self.instances.iter().position(|i| i.is_running() && i.pid() == pid)
    }

    /// Every journal line so far.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.config.journal.as_deref().map(read_journal).unwrap_or_default()
    }

    /// Every instance's stderr, for a failure message.
    pub fn logs(&self) -> String {
        self.instances
            .iter()
            .enumerate()
            .map(|(n, i)| format!("--- instance {n} ({}):\n{}", i.addr, i.log_lines().join("\n")))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Parses the journal file (missing: empty).
pub fn read_journal(path: &Path) -> Vec<JournalEntry> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("a journal line")).collect()
}

/// Journal entries of one event, counted per task.
pub fn count_per_task(journal: &[JournalEntry], event: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for e in journal.iter().filter(|e| e.event == event) {
        *counts.entry(e.task.clone()).or_insert(0) += 1;
    }
    counts
}

fn launch(config: &FleetConfig, instance: &mut Instance) {
    let mut command = Command::new(&config.binary);
    command
        .args(["serve", "--tools", "demo,conformance,fleet", "--listen", &instance.addr.to_string()])
        .arg("--config")
        .arg(config.policy_file())
        .args(["--shutdown-grace", "1s"])
        .args(["--leader-lease", &format!("{}ms", config.timing.leader_lease.as_millis())])
        .args(&config.extra)
        .env("RUST_LOG", &config.rust_log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match &config.store {
        StoreArg::Postgres(url) => command.args(["--database-url", url]),
        StoreArg::Sqlite(path) => command.arg("--db").arg(path),
    };
    match &config.journal {
        Some(path) => command.env(JOURNAL_ENV, path),
        None => command.env_remove(JOURNAL_ENV),
    };
    let mut child = command.spawn().expect("the mcp-tasks binary starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let lines = instance.log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("listening on http://") {
                let _ = tx.send(());
            }
            lines.lock().unwrap().push(line);
        }
    });
    let mut guarded = Guarded(child);
    if rx.recv_timeout(START_TIMEOUT).is_err() {
        let status = guarded.0.try_wait();
        panic!("instance {} did not start ({status:?}):\n{}", instance.addr, instance.log.lock().unwrap().join("\n"));
    }
    instance.process = Some(guarded);
}

/// One plain HTTP/1.1 GET; returns the status code and body.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {response:?}")))?;
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    Ok((status, body))
}

/// Waits until `GET /readyz` on `addr` answers 200.
pub fn wait_ready(addr: SocketAddr, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        match http_get(addr, "/readyz") {
            Ok((200, _)) => return,
            other => assert!(Instant::now() < deadline, "{addr} not ready within {within:?}: {other:?}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A real HAProxy in front of the fleet.
pub struct Balancer {
    _process: Guarded,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its configuration file.
    pub config: PathBuf,
}

impl Balancer {
    /// Writes a config round-robining `/mcp` across `backends` (health
    /// checks on `/readyz`) and starts HAProxy in the foreground; waits until
    /// it forwards.
    pub fn start(haproxy: &Path, dir: &Path, backends: &[SocketAddr]) -> Balancer {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let config = dir.join("haproxy.cfg");
        std::fs::write(&config, haproxy_config(addr, backends)).expect("write haproxy.cfg");
        let log = dir.join("haproxy.log");
        let check = Command::new(haproxy).arg("-c").arg("-f").arg(&config).output().expect("run haproxy -c");
        assert!(
            check.status.success(),
            "haproxy refused its config: {}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let child = Command::new(haproxy)
            .arg("-db") // foreground: the test owns the process
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start haproxy");
        let balancer = Balancer { _process: Guarded(child), addr, config };
        wait_ready(addr, START_TIMEOUT);
        balancer
    }

    /// The `/mcp` URL through the balancer.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

/// The shipped `deploy/haproxy.cfg`, pointed at `listen` and `backends`:
/// the tests run the configuration operators are given.
pub fn haproxy_config(listen: SocketAddr, backends: &[SocketAddr]) -> String {
    let shipped_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/haproxy.cfg");
    let shipped = std::fs::read_to_string(&shipped_path).expect("deploy/haproxy.cfg");
    const BIND: &str = "    bind 127.0.0.1:8080";
    const SERVER: &str = "    server ";
    assert_eq!(shipped.lines().filter(|l| *l == BIND).count(), 1, "deploy/haproxy.cfg binds {BIND:?} once");
    assert!(shipped.lines().any(|l| l.starts_with(SERVER)), "deploy/haproxy.cfg lists its servers");
    let mut config: String = shipped
        .lines()
        .filter(|l| !l.starts_with(SERVER))
        .map(|l| if l == BIND { format!("    bind {listen}\n") } else { format!("{l}\n") })
        .collect();
    for (n, addr) in backends.iter().enumerate() {
        config.push_str(&format!("{SERVER}mcp{n} {addr}\n"));
    }
    config
}
