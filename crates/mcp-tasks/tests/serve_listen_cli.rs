//! `mcp-tasks serve --listen`: host names, bare ports and IPv6 are accepted,
//! anything else is refused with the forms it takes, and a port in use
//! leaves no database file behind (the socket is bound before the database
//! is opened), nor does an unreadable `--auth-tokens` file. Real `mcp-tasks serve` processes.

use crate::serve_support;
use std::net::{SocketAddr, TcpListener, TcpStream};
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

impl Serving {
    /// Where it says it listens, after checking something accepts there.
    fn listening_on(&self) -> SocketAddr {
        let addr: SocketAddr = self.0.listen_addr().parse().unwrap_or_else(|e| panic!("{}: {e}", self.0.url));
        TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
        addr
    }
}

/// Runs a `serve` that is expected to stop at start-up.
fn serve_fails(db: &Path, listen: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["serve", "--listen", listen])
        .arg("--db")
        .arg(db)
        .env_remove("MCP_TASKS_LISTEN")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-tasks serve")
}

/// The database and its WAL companions do not exist.
fn assert_no_database(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let file = format!("{}{suffix}", db.display());
        assert!(!Path::new(&file).exists(), "{file} was created");
    }
}

#[test]
fn a_host_name_a_bare_port_and_ipv6_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let by_name = Serving(spawn(&dir.path().join("a.db"), "localhost:0", &[]));
    let addr = by_name.listening_on();
    assert!(addr.ip().is_loopback(), "{addr}");

    let bare = Serving(spawn(&dir.path().join("b.db"), "0", &[]));
    assert_eq!(bare.listening_on().ip().to_string(), "127.0.0.1", "a bare port listens on 127.0.0.1");

    let v6 = Serving(spawn(&dir.path().join("c.db"), "[::1]:0", &[]));
    assert!(v6.0.url.starts_with("http://[::1]:"), "{}", v6.0.url);
    assert!(v6.listening_on().is_ipv6());
}

#[test]
fn anything_else_is_refused_naming_the_forms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    for bad in ["localhost", "http://localhost:8080", "8080:localhost"] {
        let out = serve_fails(&db, bad);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "invalid value '{bad}' for '--listen <LISTEN>': expected HOST:PORT (127.0.0.1:8080, localhost:8080, \
                 [::1]:8080) or a bare PORT (8080, on 127.0.0.1)"
            )),
            "{stderr}"
        );
    }
    let out = serve_fails(&db, "no-such-host.invalid:8080");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot resolve host no-such-host.invalid"));
    assert_no_database(&db);
}

#[test]
fn a_port_in_use_leaves_no_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let out = serve_fails(&db, &addr.to_string());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("error: cannot listen on {addr}: ")), "{stderr}");
    assert!(stderr.to_lowercase().contains("in use"), "{stderr}");
    assert_no_database(&db);
}

#[test]
fn an_unreadable_tokens_file_leaves_no_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, "this is = = not toml").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["serve", "--listen", "127.0.0.1:0", "--auth-tokens"])
        .arg(&tokens)
        .arg("--db")
        .arg(&db)
        .env_remove("MCP_TASKS_LISTEN")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-tasks serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("tokens.toml"), "the error names the file: {stderr}");
    assert_no_database(&db);
}
