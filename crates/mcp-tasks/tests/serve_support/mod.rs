//! Shared by the `mcp-tasks serve` process tests: start the real binary and
//! learn where it listens.
#![allow(dead_code, unreachable_pub)]

pub mod task_client;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A running `mcp-tasks serve` process.
pub struct Server {
    pub child: Child,
    pub url: String,
    /// Every line it wrote to stderr so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

/// A test that ends without stopping its server (an early `return`, a
/// failed assertion) must not leave the process running after the suite.
impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Server {
    /// `host:port` it listens on.
    pub fn listen_addr(&self) -> String {
        self.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned()
    }

    /// Its stderr so far, one line each.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Waits (at most `within`) until a stderr line contains `needle`; returns it.
    pub fn wait_for_log(&self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            if let Some(line) = self.log_lines().into_iter().find(|l| l.contains(needle)) {
                return line;
            }
            assert!(
                Instant::now() < deadline,
                "no stderr line contains {needle:?}; stderr:\n{}",
                self.log_lines().join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().unwrap();
        assert!(status.success());
    }
}

/// Starts `mcp-tasks serve --tools demo,conformance` on `db` and waits for
/// the line saying where it listens.
pub fn spawn(db: &Path, listen: &str, extra: &[&str]) -> Server {
    launch(db, listen, extra, Some("warn,mcp_tasks::cmd::serve=info"), &[])
}

/// [`spawn`] with extra environment variables.
pub fn spawn_with_env(db: &Path, listen: &str, extra: &[&str], env: &[(&str, &str)]) -> Server {
    launch(db, listen, extra, Some("warn,mcp_tasks::cmd::serve=info"), env)
}

/// [`spawn`] with the server's default log filter (no `RUST_LOG`): what an
/// operator sees.
pub fn spawn_logged(db: &Path, listen: &str, extra: &[&str]) -> Server {
    launch(db, listen, extra, None, &[])
}

fn launch(db: &Path, listen: &str, extra: &[&str], rust_log: Option<&str>, env: &[(&str, &str)]) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"));
    command.args(["serve", "--tools", "demo,conformance", "--listen", listen]).arg("--db").arg(db).args(extra);
    command.envs(env.iter().copied());
    match rust_log {
        Some(filter) => command.env("RUST_LOG", filter),
        None => command.env_remove("RUST_LOG"),
    };
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("the mcp-tasks binary starts");
    let stderr = child.stderr.take().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let lines = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(start) = line.find("http://") {
                let url: String = line[start..].chars().take_while(|c| !c.is_whitespace()).collect();
                let _ = tx.send(url);
            }
            lines.lock().unwrap().push(line);
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("the server says where it listens");
    Server { child, url, log }
}
