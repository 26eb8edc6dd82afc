//! Client mistakes cannot flood the log: a real `mcp-tasks serve` at its
//! default log level answers requests carrying a 900 KB request id or task
//! id, and its stderr stays small — no line repeats the ids.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-tasks");
/// What stderr may hold after all the requests: start-up and shutdown lines.
const MAX_STDERR_BYTES: usize = 16 * 1024;

/// POSTs `body` to `/mcp` at `addr` and returns the status line.
fn post(addr: &str, body: &str, extra: &[(&str, &str)]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Connection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply.lines().next().unwrap_or_default().to_owned()
}

fn meta() -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "flood", "version": "0"}
    })
}

#[test]
fn huge_ids_in_client_mistakes_do_not_reach_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--tools", "demo", "--listen", "127.0.0.1:0"])
        .arg("--db")
        .arg(dir.path().join("tasks.db"))
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let logged = Arc::new(Mutex::new(Vec::<u8>::new()));
    let (url_tx, url_rx) = mpsc::channel();
    let sink = logged.clone();
    let reader = std::thread::spawn(move || {
        let mut lines = BufReader::new(stderr);
        let mut line = Vec::new();
        while lines.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            let text = String::from_utf8_lossy(&line);
            if let Some(start) = text.find("http://") {
                let url: String = text[start..].chars().take_while(|c| !c.is_whitespace()).collect();
                let _ = url_tx.send(url);
            }
            sink.lock().unwrap().extend_from_slice(&line);
            line.clear();
        }
    });
    let url = url_rx.recv_timeout(Duration::from_secs(60)).expect("the server says where it listens");
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();

    let huge = "x".repeat(900 * 1024);
    // An unknown tool, with a 900 KB request id: a JSON-RPC error from the handler.
    let body = serde_json::json!({"jsonrpc": "2.0", "id": huge, "method": "tools/call",
                                  "params": {"name": "no_such_tool", "arguments": {}, "_meta": meta()}});
    let status = post(&addr, &body.to_string(), &[("Mcp-Method", "tools/call"), ("Mcp-Name", "no_such_tool")]);
    assert!(status.contains("200"), "{status}");
    // An unknown 900 KB task id (too large for a header, so sent without Mcp-Name).
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                                  "params": {"taskId": huge, "_meta": meta()}});
    let status = post(&addr, &body.to_string(), &[("Mcp-Method", "tasks/get")]);
    assert!(status.contains("200"), "{status}");
    // A wrong-typed task id with a 900 KB request id: refused by the front layer.
    let body = serde_json::json!({"jsonrpc": "2.0", "id": huge, "method": "tasks/get",
                                  "params": {"taskId": 5, "_meta": meta()}});
    let status = post(&addr, &body.to_string(), &[("Mcp-Method", "tasks/get")]);
    assert!(status.contains("400"), "{status}");

    let term = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(term.success());
    let exited = child.wait().unwrap();
    reader.join().unwrap();
    let logged = logged.lock().unwrap();
    assert!(exited.success(), "{}", String::from_utf8_lossy(&logged));
    assert!(
        logged.len() <= MAX_STDERR_BYTES,
        "stderr grew to {} bytes; it starts: {}",
        logged.len(),
        String::from_utf8_lossy(&logged[..logged.len().min(600)])
    );
}
