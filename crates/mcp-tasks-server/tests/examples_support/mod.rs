//! Runs this crate's examples as real child processes: builds one (a no-op
//! when it is fresh), starts it on a loopback port of its own choosing and
//! reads the URL from its first line of output.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The example binary `name`, built for the profile this test was built with.
pub fn example_binary(name: &str) -> PathBuf {
    // target/<profile>/deps/<test binary>
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    // `--workspace`: the same feature unification as `cargo test --workspace`,
    // which has already built the examples, so there this is a no-op.
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--quiet", "--workspace", "--example", name]);
    if profile_dir.file_name().is_some_and(|p| p == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building example {name} failed");
    let binary = profile_dir.join("examples").join(name);
    assert!(binary.exists(), "{} was not built", binary.display());
    binary
}

/// A running example; SIGKILLed when dropped.
pub struct Running {
    pub child: Child,
    /// The first line it printed.
    pub first_line: String,
    /// Its MCP endpoint, read from the first line.
    pub url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// SIGKILL: no shutdown code runs.
    pub fn kill_9(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert!(!status.success(), "the process was killed, not exited: {status:?}");
    }
}

/// Starts `binary` with `args` in `dir` and waits (at most 20 s) for its
/// first line, which must name its endpoint (`… http://HOST:PORT/mcp …`).
pub fn start(binary: &Path, args: &[&str], dir: &Path) -> Running {
    let mut child = Command::new(binary)
        .args(args)
        .current_dir(dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line);
        // Keep draining: a closed pipe would fail the example's next print.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let started = Instant::now();
    let first_line = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("{} printed nothing within {:?}", binary.display(), started.elapsed())
    });
    let first_line = first_line.trim_end().to_owned();
    let url = first_line
        .split_whitespace()
        .find(|w| w.starts_with("http://") && w.ends_with("/mcp"))
        .unwrap_or_else(|| panic!("first line names no endpoint: {first_line:?}"))
        .to_owned();
    Running { child, first_line, url }
}
