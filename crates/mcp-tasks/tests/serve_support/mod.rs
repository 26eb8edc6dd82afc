//! Shared by the `mcp-tasks serve` process tests: start the real binary and
//! learn where it listens.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `mcp-tasks serve` process.
pub struct Server {
    pub child: Child,
    pub url: String,
}

impl Server {
    /// `host:port` it listens on.
    pub fn listen_addr(&self) -> String {
        self.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned()
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["serve", "--tools", "demo,conformance", "--listen", listen])
        .arg("--db")
        .arg(db)
        .args(extra)
        .env("RUST_LOG", "warn,mcp_tasks::cmd::serve=info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mcp-tasks binary starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(start) = line.find("http://") {
                let url: String = line[start..].chars().take_while(|c| !c.is_whitespace()).collect();
                let _ = tx.send(url);
            }
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("the server says where it listens");
    Server { child, url }
}
