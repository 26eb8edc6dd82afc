//! `mcp-tasks check` on the real binary: the paper's E4 configuration
//! (clients that wait 300 s between polls, an orphan window of 120 s) is
//! refused with both numbers named, from flags or a policy file; the
//! defaults pass; bad input exits 2; and `serve` refuses the same
//! configuration before it binds its port.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::serve_support;

/// `mcp-tasks ARGS` with no policy from the environment, to completion.
fn mcp_tasks(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"));
    for (name, _) in std::env::vars() {
        if name.starts_with("MCP_TASKS_") {
            command.env_remove(name);
        }
    }
    command.args(args).stdin(Stdio::null()).output().expect("the mcp-tasks binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The one line of `text` starting with `prefix`.
fn only_line<'a>(text: &'a str, prefix: &str) -> &'a str {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "one {prefix:?} line expected in:\n{text}");
    lines[0]
}

#[test]
fn the_defaults_pass_without_findings() {
    let out = mcp_tasks(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out).trim(), "check: 0 errors, 0 warnings: serve would start");
}

#[test]
fn the_papers_e4_clients_are_refused_naming_both_numbers() {
    let out = mcp_tasks(&["check", "--orphan-window", "120s", "--client-max-poll-gap", "5m"]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let error = only_line(&text, "error: ");
    assert!(error.contains("300s") && error.contains("120s"), "{error}");
    assert!(error.contains("--client-max-poll-gap") && error.contains("--orphan-window"), "names the settings: {error}");
    assert!(text.trim_end().ends_with("check: 1 error, 0 warnings: serve would refuse this configuration"), "{text}");
}

#[test]
fn a_poll_slack_share_past_a_half_is_refused_naming_the_setting() {
    let out = mcp_tasks(&["check", "--poll-slack-share", "0.75"]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let error = only_line(&text, "error: ");
    assert!(error.contains("retention.poll_slack_share") && error.contains("0.75"), "{error}");
    let out = mcp_tasks(&["check", "--poll-slack-share", "0"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_gap_over_half_the_window_warns_and_passes() {
    let out = mcp_tasks(&["check", "--orphan-window", "120s", "--client-max-poll-gap", "80s"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let warning = only_line(&text, "warning: ");
    assert!(warning.contains("80s") && warning.contains("120s"), "{warning}");
}

#[test]
fn a_policy_file_with_the_e4_values_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e4.toml");
    std::fs::write(&path, "[retention]\norphan_after = \"120s\"\n[poll_hint]\nmax = \"300s\"\n").unwrap();
    let out = mcp_tasks(&["check", "--config", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let error = only_line(&text, "error: ");
    assert!(error.contains("poll_hint.max (300s)") && error.contains("120s"), "{error}");

    let out = mcp_tasks(&["check", "--config", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!((report["ok"].as_bool(), report["errors"].as_u64()), (Some(false), Some(1)), "{report}");
    assert_eq!(report["findings"][0]["severity"], "error");
}

#[test]
fn bad_flags_and_unreadable_files_exit_2_naming_them() {
    let out = mcp_tasks(&["check", "--client-max-poll-gap", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--client-max-poll-gap") && stderr(&out).contains("soon"), "{}", stderr(&out));

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let out = mcp_tasks(&["check", "--config", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.toml"), "{}", stderr(&out));
}

/// Waits for `child` to exit on its own (it must, at start-up), killing it
/// and failing if it does not within a minute.
fn exit_of(mut child: std::process::Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve kept running with a configuration check must refuse");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn serve_refuses_the_e4_configuration_before_binding() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    // Held here: had serve got as far as binding, it would say the port is in use.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = taken.local_addr().unwrap().to_string();
    let child = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["serve", "--listen", &listen, "--orphan-window", "120s", "--client-max-poll-gap", "300s", "--db"])
        .arg(&db)
        .env_remove("MCP_TASKS_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = exit_of(child);
    assert!(!out.status.success());
    let text = stderr(&out);
    let error = only_line(&text, "error: clients wait");
    assert!(error.contains("300s") && error.contains("120s"), "{text}");
    assert!(text.contains("refusing to start: the configuration has 1 error"), "{text}");
    assert!(!text.contains("cannot listen"), "the check comes before the bind: {text}");
    assert!(!Path::new(&db).exists(), "nor was the database created");
}

#[test]
fn serve_logs_a_warning_and_starts() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve_support::spawn(&dir.path().join("tasks.db"), "127.0.0.1:0", &["--client-max-poll-gap", "500s"]);
    let warned = server.log.lock().unwrap().iter().any(|l| l.contains("configuration:") && l.contains("500s"));
    assert!(warned, "no warning naming 500s in:\n{}", server.log.lock().unwrap().join("\n"));
}
