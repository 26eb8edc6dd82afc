//! A server under test, in a process of its own: `mcp-tasks serve` (this
//! very executable) or the `rmcp-task-peer` beside it, on a free loopback
//! port read from the line it logs. Stopped (SIGTERM, then SIGKILL) when dropped.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

/// How long a server gets to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running server process and the URL of its MCP endpoint.
#[derive(Debug)]
pub(crate) struct Spawned {
    child: Child,
    pub(crate) url: String,
}

impl Spawned {
    /// Starts `program args…` and waits for its `listening on http://…` line.
    pub(crate) fn start(program: &PathBuf, args: &[String]) -> anyhow::Result<Spawned> {
        let mut child = Command::new(program)
            .args(args)
            // The line saying where it listens, and warnings; no per-task chatter.
            .env("RUST_LOG", "warn,rmcp=error,mcp_tasks::cmd::serve=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let (found, url) = mpsc::channel();
        // Reads the log to its end, so a chatty server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sent = false;
            let mut tail = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent {
                    if let Some(url) = listening_url(&line) {
                        let _ = found.send(Ok(url));
                        sent = true;
                    } else {
                        tail.push(line);
                    }
                }
            }
            if !sent {
                let _ = found.send(Err(tail.join("\n")));
            }
        });
        let spawned_url = match url.recv_timeout(START_TIMEOUT) {
            Ok(Ok(url)) => url,
            Ok(Err(log)) => {
                let _ = child.wait();
                bail!("{} exited before listening:\n{log}", program.display())
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("{} did not say where it listens within {START_TIMEOUT:?}", program.display())
            }
        };
        Ok(Spawned { child, url: spawned_url })
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident memory now, in bytes (Linux: `VmRSS` in `/proc`).
    pub(crate) fn resident_bytes(&self) -> anyhow::Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .context("cannot read the server's /proc status (resident memory is measured on Linux)")?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).ok_or_else(|| anyhow!("no VmRSS line"))?;
        let kib: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).ok_or_else(|| anyhow!("{line:?}"))?;
        Ok(kib * 1024)
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // SIGTERM first: `serve` checkpoints its SQLite file on a clean stop.
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The URL in a `… listening on http://ADDR/mcp …` log line.
pub(crate) fn listening_url(line: &str) -> Option<String> {
    let start = line.find("listening on http://")? + "listening on ".len();
    let url = line[start..].split_whitespace().next()?;
    Some(url.to_owned())
}

/// The `rmcp-task-peer` binary beside this executable.
pub(crate) fn peer_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let peer = exe.with_file_name(format!("rmcp-task-peer{}", std::env::consts::EXE_SUFFIX));
    if !peer.is_file() {
        bail!("{} is missing: build it with `cargo build --release -p mcp-tasks`", peer.display());
    }
    Ok(peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_read_from_either_servers_log_line() {
        let ours = "2026-12-03T20:00:00Z  INFO mcp_tasks::cmd::serve: listening on http://127.0.0.1:4021/mcp (store: SQLite x.db, tools: fleet)";
        assert_eq!(listening_url(ours).as_deref(), Some("http://127.0.0.1:4021/mcp"));
        let peer = "rmcp-task-peer listening on http://127.0.0.1:5000/mcp (rmcp TaskManager, in memory)";
        assert_eq!(listening_url(peer).as_deref(), Some("http://127.0.0.1:5000/mcp"));
        assert_eq!(listening_url("INFO starting"), None);
    }
}
