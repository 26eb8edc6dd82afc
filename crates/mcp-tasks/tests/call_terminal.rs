//! `mcp-tasks call` on a terminal: the spinner leaves no line behind. The
//! real binary runs in a pseudo-terminal (`script` from util-linux), and what
//! it wrote is rendered by a terminal emulator (`vt100`) into the screen a
//! user would see.

use crate::serve_support;
use std::path::Path;
use std::process::{Command, Stdio};

use serve_support::{Server, spawn};

/// A `mcp-tasks serve` killed when the test ends, pass or fail.
struct Serving(Server);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.child.kill();
        let _ = self.0.child.wait();
    }
}

const ROWS: u16 = 30;
const COLS: u16 = 100;

/// Runs `mcp-tasks call ARGS…` in a pseudo-terminal of ROWS×COLS and
/// returns the screen it left, row by row (trailing blank rows dropped).
fn screen_after(args: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{}'", a.replace('\'', r"'\''"))).collect();
    let command =
        format!("stty rows {ROWS} cols {COLS}; exec '{}' call {}", env!("CARGO_BIN_EXE_mcp-tasks"), quoted.join(" "));
    let out = Command::new("script")
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .env_remove("MCP_TASKS_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("`script` (util-linux) runs");
    assert!(out.status.success(), "call in a terminal: {}", String::from_utf8_lossy(&out.stdout));
    let size = |n: u16| std::num::NonZeroU16::new(n).unwrap();
    let mut terminal = vt100::Parser::new(size(ROWS), size(COLS), 0);
    terminal.process(&out.stdout);
    let mut rows: Vec<String> = terminal.screen().rows(0, COLS).map(|r| r.trim_end().to_owned()).collect();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

/// indicatif's default spinner frames are braille patterns.
fn has_spinner_glyph(text: &str) -> bool {
    text.chars().any(|c| ('\u{2800}'..='\u{28FF}').contains(&c))
}

fn book(dir: &Path) -> String {
    dir.join("client.db").to_str().unwrap().to_owned()
}

#[test]
fn the_spinner_leaves_no_line_above_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let server = Serving(spawn(&dir.path().join("server.db"), "127.0.0.1:0", &[]));
    // Long enough for the spinner to tick many times (every 120 ms).
    let args = r#"{"topic":"tty","sections":2,"ms":400}"#;
    let rows = screen_after(&[&server.0.url, "long_running_report", "--args", args, "--book", &book(dir.path())]);
    let screen = rows.join("\n");
    assert!(!has_spinner_glyph(&screen), "a spinner glyph is left on the screen:\n{screen}");
    let report = rows.iter().position(|l| l == "Report on tty").unwrap_or_else(|| panic!("no result:\n{screen}"));
    assert!(report > 0 && rows[report - 1].ends_with(" created"), "a stray line above the result:\n{screen}");
    assert_eq!(rows.last().map(String::as_str), Some("2. Findings for part 2 of tty."), "{screen}");
}

#[test]
fn without_a_terminal_there_is_no_spinner_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let server = Serving(spawn(&dir.path().join("server.db"), "127.0.0.1:0", &[]));
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["call", &server.0.url, "long_running_report", "--args", r#"{"sections":1,"ms":300}"#])
        .args(["--book", &book(dir.path())])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!has_spinner_glyph(&stdout) && !has_spinner_glyph(&stderr), "{stderr}\n{stdout}");
    assert!(!stderr.contains('\u{1b}'), "terminal escapes in piped output: {stderr:?}");
}
