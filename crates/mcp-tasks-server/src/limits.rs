//! [`ConnectionLimits`]: how long a connection may take to send a request,
//! how many may be open, and how many request-body bytes may be in flight.
//! Without them a client that connects and says nothing (or stops half way)
//! holds a file descriptor forever, and a thousand such sockets make the
//! server unreachable.

use std::time::Duration;

/// Default [`ConnectionLimits::header_timeout`].
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default [`ConnectionLimits::body_timeout`].
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`ConnectionLimits::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default [`ConnectionLimits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Default [`ConnectionLimits::max_body_bytes_in_flight`]: 8 MiB. A body
/// costs its server many times its size while rmcp parses it (about 15× for
/// a 1 MiB `arguments` of small values), so this bounds that memory to a
/// few hundred MB, and eight large bodies are more than two cores can parse at once.
pub const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT: usize = 8 * 1024 * 1024;

/// Bounds on connections and on the request bodies they carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Time a connection gets to deliver a complete request head, counted
    /// from its accept or from the first byte of a later request. A socket
    /// that sends nothing, or stops mid-headers, is closed after it.
    pub header_timeout: Duration,
    /// Time a request gets to deliver its whole body once its head arrived;
    /// a body that stalls is answered 408 and its connection closed.
    pub body_timeout: Duration,
    /// Time a keep-alive connection may sit idle (no request in progress,
    /// nothing received) after a response before it is closed. Also bounds
    /// how long the server waits on a client that stops reading a response.
    pub idle_timeout: Duration,
    /// Connections served at once. Beyond it the server stops accepting: new
    /// connections wait in the kernel's listen backlog until one closes.
    pub max_connections: usize,
    /// Request-body bytes the server may hold at once (declared
    /// `Content-Length`, or the body limit when undeclared). A body that
    /// would exceed it is refused at once with HTTP 503 and `Retry-After`;
    /// bodies of at most [`SMALL_BODY_BYTES`](crate::body_budget::SMALL_BODY_BYTES)
    /// are not counted, so small requests keep flowing while large ones arrive.
    pub max_body_bytes_in_flight: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_body_bytes_in_flight: DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
        }
    }
}

impl ConnectionLimits {
    /// Why these limits cannot work together with a body limit, if they cannot.
    pub fn problem(&self, max_body_bytes: usize) -> Option<String> {
        if self.header_timeout.is_zero() || self.body_timeout.is_zero() || self.idle_timeout.is_zero() {
            return Some("the header, body and idle timeouts must be positive".to_owned());
        }
        if self.max_connections == 0 {
            return Some("max_connections must be at least 1".to_owned());
        }
        if self.max_body_bytes_in_flight < max_body_bytes {
            return Some(format!(
                "max_body_bytes_in_flight ({}) must be at least the body limit ({max_body_bytes}), \
                 or a body at the limit could never be admitted",
                self.max_body_bytes_in_flight
            ));
        }
        None
    }
}
