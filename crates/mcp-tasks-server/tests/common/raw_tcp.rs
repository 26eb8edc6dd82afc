//! Raw TCP for the connection tests: requests written by hand, replies read
//! until the server closes, every wait bounded.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// The longest a test waits for the server to act (generous: the machine is loaded).
pub const BOUND: Duration = Duration::from_secs(20);

/// `host:port` of a harness URL.
pub fn addr(url: &str) -> String {
    url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned()
}

/// A connection to `url`'s server.
pub async fn connect(url: &str) -> TcpStream {
    TcpStream::connect(addr(url)).await.unwrap()
}

/// Reads until the server closes the connection; returns what it sent and
/// when it closed. Panics if it is still open after [`BOUND`].
pub async fn read_until_closed(stream: &mut TcpStream) -> (String, Instant) {
    let mut received = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = Instant::now() + BOUND;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&received).into_owned(), Instant::now()),
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
            Err(_) => panic!(
                "the server kept the connection open for {BOUND:?}; received so far: {:?}",
                String::from_utf8_lossy(&received)
            ),
        }
    }
}

/// A complete HTTP/1.1 POST of `body` to `/mcp` with the MCP headers (keep-alive).
pub fn post_request(url: &str, body: &str, extra_headers: &[(&str, &str)]) -> String {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Length: {}\r\n",
        addr(url),
        body.len()
    );
    for (k, v) in extra_headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// Writes all of `data`.
pub async fn send(stream: &mut TcpStream, data: &str) {
    stream.write_all(data.as_bytes()).await.unwrap();
}
