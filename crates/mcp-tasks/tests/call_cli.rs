//! `mcp-tasks call` end to end: the built binary against `mcp-tasks serve` on
//! a temporary database and a free loopback port, as real processes.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use mcp_tasks_client::HandleBook;
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

struct Server {
    _child: Killed,
    url: String,
}

/// A fresh directory under the system temp dir, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("mcp-tasks-call-cli-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

fn wait_until(what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn serve(dir: &Path) -> Server {
    serve_at(dir, free_addr(), "server.log")
}

fn serve_at(dir: &Path, addr: SocketAddr, log_name: &str) -> Server {
    let child = Command::new(BIN)
        .args(["serve", "--listen", &addr.to_string(), "--tools", "demo,conformance"])
        .arg("--db")
        .arg(dir.join("server.db"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(log_name)).unwrap())
        .spawn()
        .expect("start mcp-tasks serve");
    let mut child = Killed(child);
    let log = dir.join(log_name);
    wait_until("the server to listen", Duration::from_secs(30), || {
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!("mcp-tasks serve exited ({status}): {}", std::fs::read_to_string(&log).unwrap_or_default());
        }
        TcpStream::connect(addr).is_ok()
    });
    Server { _child: child, url: format!("http://{addr}/mcp") }
}

fn call(book: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("call")
        .args(args)
        .arg("--book")
        .arg(book)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-tasks call")
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn book_path(dir: &Path) -> PathBuf {
    dir.join("client.db")
}

#[test]
fn a_demo_tool_runs_to_completion_and_prints_its_result() {
    let dir = TempDir::new();
    let server = serve(dir.path());
    let book = book_path(dir.path());
    let out = call(&book, &[&server.url, "long_running_report", "--args", r#"{"topic":"tests","sections":2,"ms":100}"#]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.starts_with("Report on tests"), "{stdout}");
    assert!(stdout.contains("2. Findings for part 2 of tests."), "{stdout}");
    // Not a terminal: plain status lines on stderr.
    assert!(stderr.contains("created"), "{stderr}");
    let book = HandleBook::open(&book).unwrap();
    assert!(book.unfinished(None).unwrap().is_empty());
}

#[test]
fn json_output_and_exit_codes_tell_the_outcomes_apart() {
    let dir = TempDir::new();
    let server = serve(dir.path());
    let book = book_path(dir.path());

    let failed = call(&book, &[&server.url, "protocol_error_job", "--json"]);
    assert_eq!(failed.status.code(), Some(3), "{}", String::from_utf8_lossy(&failed.stderr));
    let v = &json_lines(&failed)[0];
    assert_eq!(v["status"], "failed");
    assert_eq!(v["error"]["code"], -32603);
    assert!(v["taskId"].as_str().is_some_and(|id| !id.is_empty()));

    let tool_error = call(&book, &[&server.url, "failing_job", "--json"]);
    assert_eq!(tool_error.status.code(), Some(1), "{}", String::from_utf8_lossy(&tool_error.stderr));
    let v = &json_lines(&tool_error)[0];
    assert_eq!(v["status"], "completed");
    assert_eq!(v["result"]["isError"], true);

    let bad_args = call(&book, &[&server.url, "long_running_report", "--args", "[1,2]"]);
    assert_eq!(bad_args.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_args.stderr).contains("--args must be a JSON object"));
}

#[test]
fn resume_after_sigkill_carries_on_to_the_result() {
    let dir = TempDir::new();
    let server = serve(dir.path());
    let book_file = book_path(dir.path());
    let mut waiting = Killed(
        Command::new(BIN)
            .args(["call", &server.url, "long_running_report", "--args", r#"{"topic":"resume","sections":3,"ms":700}"#])
            .arg("--book")
            .arg(&book_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the handle to reach the book", Duration::from_secs(30), || {
        book_file.exists() && HandleBook::open(&book_file).is_ok_and(|b| b.unfinished(None).is_ok_and(|u| !u.is_empty()))
    });
    // SIGKILL mid-poll: no chance to clean up.
    waiting.0.kill().unwrap();
    let status = waiting.0.wait().unwrap();
    assert!(!status.success());
    let unfinished = HandleBook::open(&book_file).unwrap().unfinished(None).unwrap();
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].tool, "long_running_report");

    let resumed = call(&book_file, &["--resume", &server.url, "--json"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", String::from_utf8_lossy(&resumed.stderr));
    let lines = json_lines(&resumed);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["status"], "completed");
    assert_eq!(lines[0]["taskId"], unfinished[0].task_id.as_str());
    assert_eq!(lines[0]["tool"], "long_running_report");
    let text = lines[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("3. Findings for part 3 of resume."), "{text}");
    assert!(HandleBook::open(&book_file).unwrap().unfinished(None).unwrap().is_empty());

    // Nothing left: a second resume says so and succeeds.
    let again = call(&book_file, &["--resume"]);
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no unfinished task handles"));
}

#[test]
fn a_waiting_call_carries_on_after_the_server_is_sigkilled_and_restarted() {
    let dir = TempDir::new();
    let addr = free_addr();
    let first = serve_at(dir.path(), addr, "server-1.log");
    let book_file = book_path(dir.path());
    let mut waiting = Killed(
        Command::new(BIN)
            .args(["call", &first.url, "long_running_report", "--args", r#"{"topic":"outage","sections":4,"ms":600}"#])
            .arg("--book")
            .arg(&book_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.path().join("call.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_until("the handle to reach the book", Duration::from_secs(30), || {
        book_file.exists() && HandleBook::open(&book_file).is_ok_and(|b| b.unfinished(None).is_ok_and(|u| !u.is_empty()))
    });
    drop(first); // SIGKILL: the task's lease is left behind in the database
    // The waiting call notices the outage before the server comes back.
    let call_log = dir.path().join("call.log");
    wait_until("the call to report the outage", Duration::from_secs(30), || {
        std::fs::read_to_string(&call_log).is_ok_and(|l| l.contains("server unreachable"))
    });
    let _second = serve_at(dir.path(), addr, "server-2.log");

    let start = Instant::now();
    let status = loop {
        if let Some(status) = waiting.0.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the waiting call never finished");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut waiting.0.stdout.take().unwrap(), &mut stdout).unwrap();
    let log = std::fs::read_to_string(dir.path().join("call.log")).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "stdout: {stdout}\ncall log: {log}");
    assert!(stdout.contains("4. Findings for part 4 of outage."), "{stdout}");
    assert!(HandleBook::open(&book_file).unwrap().unfinished(None).unwrap().is_empty());
}

#[test]
fn ctrl_c_cancels_the_task_and_the_call_exits_cancelled() {
    let dir = TempDir::new();
    let server = serve(dir.path());
    let book_file = book_path(dir.path());
    let call_log = dir.path().join("call.log");
    let mut waiting = Killed(
        Command::new(BIN)
            .args(["call", &server.url, "long_running_report", "--args", r#"{"sections":50,"ms":1000}"#, "--json"])
            .arg("--book")
            .arg(&book_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&call_log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_until("the task to start", Duration::from_secs(30), || {
        std::fs::read_to_string(&call_log).is_ok_and(|l| l.contains("writing section 1"))
    });
    let sent = Command::new("kill").args(["-s", "INT", &waiting.0.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = waiting.0.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the call never finished after Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut waiting.0.stdout.take().unwrap(), &mut stdout).unwrap();
    let log = std::fs::read_to_string(&call_log).unwrap_or_default();
    assert_eq!(status.code(), Some(4), "stdout: {stdout}\ncall log: {log}");
    assert!(log.contains("cancelling task"), "{log}");
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(v["status"], "cancelled");
    assert!(HandleBook::open(&book_file).unwrap().unfinished(None).unwrap().is_empty());
}
