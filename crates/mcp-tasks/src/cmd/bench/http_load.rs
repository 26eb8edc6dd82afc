//! The load generator: N simulated clients, each with one keep-alive HTTP/1
//! connection of its own (hyper's client), sending its next request as soon
//! as the last one is answered (a closed loop, as `wrk` does), every
//! latency recorded in an HDR histogram.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use hdrhistogram::Histogram;
use http_body_util::BodyExt;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, Uri};
use hyper_util::rt::TokioIo;

use super::mcp_requests::{Answer, Body, McpRequest};

/// Where requests go: the server's address and the endpoint's path.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) addr: SocketAddr,
    pub(crate) path: String,
}

impl Endpoint {
    /// Reads `http://HOST:PORT/PATH`.
    pub(crate) fn parse(url: &str) -> anyhow::Result<Endpoint> {
        let rest = url.strip_prefix("http://").ok_or_else(|| anyhow!("{url:?} is not an http:// URL"))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr = authority.parse().with_context(|| format!("{authority:?} in {url:?} is not an IP:PORT"))?;
        Ok(Endpoint { addr, path: if path.is_empty() { "/".to_owned() } else { path.to_owned() } })
    }
}

/// One keep-alive connection.
pub(crate) struct Connection {
    sender: SendRequest<Body>,
    endpoint: Endpoint,
    /// The request target and `Host`, parsed once (cheap clones after).
    uri: Uri,
    host: HeaderValue,
}

/// Headers every request carries, beside `Host`, `Mcp-Method` and `Mcp-Name`.
const FIXED_HEADERS: [(HeaderName, HeaderValue); 3] = [
    (header::CONTENT_TYPE, HeaderValue::from_static("application/json")),
    (header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream")),
    (HeaderName::from_static("mcp-protocol-version"), HeaderValue::from_static("2026-07-28")),
];

impl Connection {
    /// Opens a connection (TCP_NODELAY, as a latency-minded client sets).
    pub(crate) async fn open(endpoint: &Endpoint) -> anyhow::Result<Connection> {
        let stream = tokio::net::TcpStream::connect(endpoint.addr)
            .await
            .with_context(|| format!("cannot connect to {}", endpoint.addr))?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let uri = endpoint.path.parse().with_context(|| format!("{:?} is not a request path", endpoint.path))?;
        let host = HeaderValue::from_str(&endpoint.addr.to_string())?;
        Ok(Connection { sender, endpoint: endpoint.clone(), uri, host })
    }

    /// Sends one request and reads its answer (HTTP errors and JSON-RPC errors are errors).
    pub(crate) async fn send(&mut self, request: McpRequest) -> anyhow::Result<Answer> {
        // Built from parts parsed once: the generator's every instruction
        // is taken from the server it shares the cores with.
        let mut http = hyper::Request::new(request.body);
        *http.method_mut() = Method::POST;
        *http.uri_mut() = self.uri.clone();
        let headers = http.headers_mut();
        headers.insert(header::HOST, self.host.clone());
        headers.extend(FIXED_HEADERS.iter().cloned());
        headers.insert(HeaderName::from_static("mcp-method"), HeaderValue::from_static(request.method));
        headers.insert(HeaderName::from_static("mcp-name"), HeaderValue::try_from(request.name)?);
        self.sender.ready().await?;
        let response = self.sender.send_request(http).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            return Err(anyhow!("HTTP {status}: {}", String::from_utf8_lossy(&body[..body.len().min(200)])));
        }
        Answer::parse(&body).map_err(|e| anyhow!(e))
    }
}

/// When a load stops.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    /// After this long.
    After(Duration),
    /// After this many requests in all (shared by every client).
    Count(u64),
}

/// What a load did: requests answered, failures, the time it took, and the
/// latency of every answered request (microseconds).
#[derive(Debug, Clone)]
pub(crate) struct LoadOutcome {
    pub(crate) answered: u64,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
    pub(crate) elapsed: Duration,
    pub(crate) latency_us: Histogram<u64>,
    /// Every answer, in no particular order (the ids of created tasks).
    pub(crate) answers: Vec<Answer>,
}

impl LoadOutcome {
    /// Answered requests per second.
    pub(crate) fn per_second(&self) -> f64 {
        self.answered as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A histogram of microseconds from 1 µs to 10 minutes, 3 significant digits.
pub(crate) fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("static histogram bounds are valid")
}

/// Runs `clients` closed-loop clients until `stop`; client `c`'s `n`-th
/// request is `make(c, n)`. `keep_answers` keeps every answer (for the ids).
pub(crate) async fn run<F>(
    endpoint: &Endpoint,
    clients: usize,
    stop: Stop,
    keep_answers: bool,
    make: F,
) -> anyhow::Result<LoadOutcome>
where
    F: Fn(usize, u64) -> McpRequest + Send + Sync + 'static,
{
    let make = Arc::new(make);
    let issued = Arc::new(AtomicU64::new(0));
    let mut connections = Vec::with_capacity(clients);
    for _ in 0..clients {
        connections.push(Connection::open(endpoint).await?);
    }
    let started = Instant::now();
    let mut workers = Vec::with_capacity(clients);
    for (client, mut connection) in connections.into_iter().enumerate() {
        let (make, issued) = (make.clone(), issued.clone());
        workers.push(tokio::spawn(async move {
            let mut outcome = ClientOutcome::default();
            let mut n = 0u64;
            loop {
                let go_on = match stop {
                    Stop::After(duration) => started.elapsed() < duration,
                    Stop::Count(total) => issued.fetch_add(1, Ordering::Relaxed) < total,
                };
                if !go_on {
                    break;
                }
                let request = make(client, n);
                n += 1;
                let sent = Instant::now();
                match connection.send(request).await {
                    Ok(answer) => {
                        let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX).max(1);
                        outcome.latency_us.saturating_record(micros);
                        outcome.answered += 1;
                        if keep_answers {
                            outcome.answers.push(answer);
                        }
                    }
                    Err(e) => {
                        outcome.errors += 1;
                        outcome.first_error.get_or_insert_with(|| e.to_string());
                        // A broken connection stays broken: open another.
                        if connection.sender.is_closed() {
                            match Connection::open(&connection.endpoint).await {
                                Ok(fresh) => connection = fresh,
                                Err(_) => break,
                            }
                        }
                    }
                }
            }
            outcome
        }));
    }
    let mut total = LoadOutcome {
        answered: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latency_us: latency_histogram(),
        answers: Vec::new(),
    };
    for worker in workers {
        let outcome = worker.await.context("a load client panicked")?;
        total.answered += outcome.answered;
        total.errors += outcome.errors;
        if total.first_error.is_none() {
            total.first_error = outcome.first_error;
        }
        total.latency_us.add(&outcome.latency_us).expect("histograms with the same bounds add");
        total.answers.extend(outcome.answers);
    }
    total.elapsed = started.elapsed();
    Ok(total)
}

/// One client's share of a load.
struct ClientOutcome {
    answered: u64,
    errors: u64,
    first_error: Option<String>,
    latency_us: Histogram<u64>,
    answers: Vec<Answer>,
}

impl Default for ClientOutcome {
    fn default() -> Self {
        ClientOutcome { answered: 0, errors: 0, first_error: None, latency_us: latency_histogram(), answers: Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_read_from_the_url_a_server_logs() {
        let e = Endpoint::parse("http://127.0.0.1:4321/mcp").unwrap();
        assert_eq!((e.addr.port(), e.path.as_str()), (4321, "/mcp"));
        assert_eq!(Endpoint::parse("http://127.0.0.1:80").unwrap().path, "/");
        assert!(Endpoint::parse("https://127.0.0.1/mcp").is_err());
        assert!(Endpoint::parse("http://localhost:80/mcp").unwrap_err().to_string().contains("localhost"));
    }
}
