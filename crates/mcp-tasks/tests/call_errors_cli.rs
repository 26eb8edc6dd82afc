//! What `mcp-tasks call` says when it cannot get an MCP answer: one readable
//! line on stderr per failure (what happened and what to do, no Rust type
//! names, nothing said twice) and a non-zero exit code. Real processes:
//! the built binary against a closed port, a real `mcp-tasks serve`, and a
//! plain HTTP server that is not MCP.

use crate::serve_support;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serve_support::{Server, spawn};

/// A `mcp-tasks serve` killed when the test ends, pass or fail.
struct Serving(Server);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.child.kill();
        let _ = self.0.child.wait();
    }
}

fn serve(dir: &Path, extra: &[&str]) -> Serving {
    Serving(spawn(&dir.join("server.db"), "127.0.0.1:0", extra))
}

/// Runs `mcp-tasks call URL long_running_report` with `extra` flags and no token from the environment.
fn call(dir: &Path, url: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["call", url, "long_running_report"])
        .args(extra)
        .arg("--book")
        .arg(dir.join("client.db"))
        .env_remove("MCP_TASKS_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-tasks call")
}

/// The one line `call` printed on stderr, after checking it failed with
/// exit code 2 and said nothing in Rust's terms or twice.
fn error_line(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "exit code; stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    for internal in ["rmcp", "::", "Transport [", "Error {", "Client error", "when send"] {
        assert!(!stderr.contains(internal), "{internal:?} in {stderr}");
    }
    let line = stderr.trim_end().to_owned();
    let parts: Vec<&str> = line.split(": ").collect();
    for (i, part) in parts.iter().enumerate() {
        assert!(!parts[i + 1..].contains(part), "{part:?} said twice: {line}");
    }
    line
}

#[test]
fn a_closed_port_asks_whether_the_server_is_running() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let line = error_line(&call(dir.path(), &url, &[]));
    assert_eq!(
        line,
        format!(
            "error: cannot start an MCP session with {url}: connection refused — is the server running at 127.0.0.1:{port}?"
        )
    );
}

#[test]
fn a_wrong_path_points_at_the_mcp_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[]);
    let url = server.0.url.replace("/mcp", "/wrong");
    let line = error_line(&call(dir.path(), &url, &[]));
    assert_eq!(
        line,
        format!(
            "error: cannot start an MCP session with {url}: HTTP 404 Not Found at /wrong — the MCP endpoint is usually /mcp"
        )
    );
}

#[test]
fn a_missing_or_wrong_token_says_how_to_pass_one() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, "\"s3cret\" = \"alice\"\n").unwrap();
    let server = serve(dir.path(), &["--auth-tokens", tokens.to_str().unwrap()]);
    let url = server.0.url.clone();

    let line = error_line(&call(dir.path(), &url, &[]));
    assert_eq!(
        line,
        format!(
            "error: cannot start an MCP session with {url}: HTTP 401 Unauthorized — the server needs a bearer token; \
             pass --token or set MCP_TASKS_TOKEN"
        )
    );
    let line = error_line(&call(dir.path(), &url, &["--token", "wrong"]));
    assert!(line.ends_with("HTTP 401 Unauthorized — the server refused the bearer token; check the token given by --token or MCP_TASKS_TOKEN"), "{line}");

    // The right token gets through (the lines above were about the token).
    let ok = call(dir.path(), &url, &["--token", "s3cret", "--args", r#"{"sections":1,"ms":0}"#]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
}

#[test]
fn https_to_a_plain_port_says_this_client_speaks_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[]);
    let url = server.0.url.replace("http://", "https://");
    let line = error_line(&call(dir.path(), &url, &[]));
    assert!(
        line.ends_with(": this client speaks plain HTTP only — use an http:// URL (or a proxy that ends TLS)"),
        "{line}"
    );
}

/// Answers every request on a fresh loopback port with `200 OK` and an HTML
/// page, as a web server that is not MCP would.
fn html_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = std::io::Read::read_exact(&mut reader, &mut body);
            let page = "<!doctype html><html><body>Welcome</body></html>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    format!("http://{addr}/")
}

#[test]
fn an_html_page_is_not_mistaken_for_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let url = html_server();
    let line = error_line(&call(dir.path(), &url, &[]));
    assert_eq!(
        line,
        format!(
            "error: cannot start an MCP session with {url}: the server's answer is not MCP (it sent text/html) — \
             is this the MCP endpoint? It is usually /mcp"
        )
    );
}

#[test]
fn a_url_that_is_not_http_is_printed_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let line = error_line(&call(dir.path(), "ftp://example.org/mcp", &[]));
    assert_eq!(line, "error: not an http(s) URL: ftp://example.org/mcp");
}

#[test]
fn a_cause_already_in_the_message_is_not_printed_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["call", "http://127.0.0.1:1/mcp", "long_running_report", "--book", "/dev/null/book/client.db"])
        .stdin(Stdio::null())
        .current_dir(dir.path())
        .output()
        .unwrap();
    let line = error_line(&out);
    assert!(line.starts_with("error: cannot create the handle book's directory /dev/null/book: "), "{line}");
}
