//! Why a server gave no MCP answer, sorted out of rmcp's transport errors.
//!
//! rmcp wraps the HTTP client's error in its transport's error and that in a
//! type-erased `DynamicTransportError`, whose text repeats the transport's
//! full type name and the same cause twice. This module walks that chain by
//! type (reqwest's connect/timeout/DNS flags, the I/O error underneath, the
//! HTTP status rmcp kept) into one [`TransportFailure`] a user can act on.

use std::error::Error as StdError;
use std::fmt;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// The transport error of rmcp's reqwest-backed Streamable HTTP client.
type HttpError = StreamableHttpError<reqwest::Error>;

/// Why a request (or the session's `server/discover`) got no MCP answer: what
/// happened, in terms a user can act on. Its text never repeats a cause and
/// names no Rust type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportFailure {
    /// Nothing accepts connections at the address (TCP connection refused).
    ConnectionRefused {
        /// `host:port` that refused.
        address: String,
    },
    /// The URL's host name does not resolve.
    UnknownHost {
        /// The host name.
        host: String,
    },
    /// Connecting or waiting for the answer took too long.
    TimedOut,
    /// An `https://` URL: this client is built for plain HTTP only.
    TlsUnsupported,
    /// HTTP 401: the server needs a bearer token, or refused the one sent.
    Unauthorized {
        /// Whether a token was sent (and so was refused).
        token_sent: bool,
    },
    /// HTTP 403: the token is known but not allowed here.
    Forbidden,
    /// HTTP 404: nothing serves MCP at the URL's path.
    NotFound {
        /// The path that was not found.
        path: String,
    },
    /// Another HTTP error status.
    HttpStatus {
        /// The status code.
        status: u16,
    },
    /// The server answered, but not with MCP (an HTML page, JSON that is not JSON-RPC, ...).
    NotMcp {
        /// What it answered with.
        detail: String,
    },
    /// The server speaks MCP, but none of the protocol versions this client does.
    Incompatible {
        /// The versions the server offered.
        offered: Vec<String>,
    },
    /// The server refused `server/discover` with a JSON-RPC error.
    Rejected {
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The connection closed before the answer came.
    Closed,
    /// Anything else, in the innermost cause's words.
    Other {
        /// What went wrong.
        detail: String,
    },
}

impl fmt::Display for TransportFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportFailure::ConnectionRefused { address } => {
                write!(f, "connection refused — is the server running at {address}?")
            }
            TransportFailure::UnknownHost { host } => write!(f, "unknown host {host} — check the URL's host name"),
            TransportFailure::TimedOut => f.write_str("timed out waiting for the server"),
            TransportFailure::TlsUnsupported => {
                f.write_str("this client speaks plain HTTP only — use an http:// URL (or a proxy that ends TLS)")
            }
            TransportFailure::Unauthorized { token_sent: false } => {
                f.write_str("HTTP 401 Unauthorized — the server needs a bearer token")
            }
            TransportFailure::Unauthorized { token_sent: true } => {
                f.write_str("HTTP 401 Unauthorized — the server refused the bearer token")
            }
            TransportFailure::Forbidden => f.write_str("HTTP 403 Forbidden — the bearer token is not allowed here"),
            TransportFailure::NotFound { path } => {
                write!(f, "HTTP 404 Not Found at {path} — the MCP endpoint is usually /mcp")
            }
            TransportFailure::HttpStatus { status } => match status_reason(*status) {
                Some(reason) => write!(f, "the server answered HTTP {status} {reason}"),
                None => write!(f, "the server answered HTTP {status}"),
            },
            TransportFailure::NotMcp { detail } => {
                write!(f, "the server's answer is not MCP ({detail}) — is this the MCP endpoint? It is usually /mcp")
            }
            TransportFailure::Incompatible { offered } if offered.is_empty() => {
                f.write_str("the server offers no MCP protocol version this client speaks (2026-07-28)")
            }
            TransportFailure::Incompatible { offered } => {
                write!(f, "the server speaks MCP {}, this client only 2026-07-28", offered.join(", "))
            }
            TransportFailure::Rejected { code, message } => {
                write!(f, "the server refused the session with JSON-RPC error {code}: {message}")
            }
            TransportFailure::Closed => f.write_str("the connection closed before the server answered"),
            TransportFailure::Other { detail } => f.write_str(detail),
        }
    }
}

impl std::error::Error for TransportFailure {}

/// What the classification needs to know about the request that failed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempt<'a> {
    /// The URL requested.
    pub(crate) url: &'a str,
    /// Whether a bearer token was sent.
    pub(crate) token_sent: bool,
}

impl TransportFailure {
    /// Sorts the error of a failed `server/discover`.
    pub(crate) fn of_initialize(e: &ClientInitializeError, at: Attempt<'_>) -> Self {
        match e {
            ClientInitializeError::TransportError { error, .. } => Self::of_transport(error, at),
            ClientInitializeError::JsonRpcError(data) => match rejected_discover_status(&data.message) {
                Some(status) => Self::of_status(status, at),
                None => TransportFailure::Rejected { code: data.code.0, message: data.message.to_string() },
            },
            ClientInitializeError::NoCompatibleProtocolVersion { server_supported, .. } => {
                TransportFailure::Incompatible { offered: server_supported.iter().map(ToString::to_string).collect() }
            }
            ClientInitializeError::ConnectionClosed(_) => TransportFailure::Closed,
            ClientInitializeError::LegacyFallbackFailed { discover, .. } => Self::of_initialize(discover, at),
            ClientInitializeError::ExpectedInitResponse(_)
            | ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::ConflictInitResponseId(..)
            | ClientInitializeError::UncorrelatedErrorResponse { .. } => {
                TransportFailure::NotMcp { detail: "it did not answer server/discover".to_owned() }
            }
            other => TransportFailure::Other { detail: innermost(other) },
        }
    }

    /// Sorts the error of a request that got no JSON-RPC answer. `None` for an
    /// answer (`McpError`) or a result of the wrong type, which are not
    /// transport failures.
    pub(crate) fn of_service(e: &ServiceError, at: Attempt<'_>) -> Option<Self> {
        Some(match e {
            ServiceError::McpError(_) | ServiceError::UnexpectedResponse => return None,
            ServiceError::TransportSend(error) => Self::of_transport(error, at),
            ServiceError::TransportClosed => TransportFailure::Closed,
            ServiceError::Timeout { .. } => TransportFailure::TimedOut,
            other => TransportFailure::Other { detail: innermost(other) },
        })
    }

    /// Whether trying again later may succeed (the server may come back),
    /// as opposed to a failure that needs the user to change something.
    pub fn is_transient(&self) -> bool {
        match self {
            TransportFailure::ConnectionRefused { .. }
            | TransportFailure::UnknownHost { .. }
            | TransportFailure::TimedOut
            | TransportFailure::Closed
            | TransportFailure::Other { .. } => true,
            TransportFailure::HttpStatus { status } => *status == 429 || *status >= 500,
            TransportFailure::TlsUnsupported
            | TransportFailure::Unauthorized { .. }
            | TransportFailure::Forbidden
            | TransportFailure::NotFound { .. }
            | TransportFailure::NotMcp { .. }
            | TransportFailure::Incompatible { .. }
            | TransportFailure::Rejected { .. } => false,
        }
    }

    fn of_transport(error: &DynamicTransportError, at: Attempt<'_>) -> Self {
        let inner: &(dyn StdError + 'static) = error.error.as_ref();
        match inner.downcast_ref::<HttpError>() {
            Some(e) => Self::of_http(e, at),
            None => Self::of_chain(inner, at),
        }
    }

    fn of_http(e: &HttpError, at: Attempt<'_>) -> Self {
        match e {
            StreamableHttpError::Client(e) => Self::of_reqwest(e, at),
            StreamableHttpError::HttpStatus(s) => Self::of_status(s.status, at),
            StreamableHttpError::AuthRequired(_) => TransportFailure::Unauthorized { token_sent: at.token_sent },
            StreamableHttpError::InsufficientScope(_) => TransportFailure::Forbidden,
            StreamableHttpError::UnexpectedContentType(content_type) => TransportFailure::NotMcp {
                detail: match content_type {
                    Some(ct) => format!("it sent {}", ct.split(';').next().unwrap_or(ct).trim()),
                    None => "it sent no content type".to_owned(),
                },
            },
            // rmcp's text here names its own types; only a status is worth keeping.
            StreamableHttpError::UnexpectedServerResponse(text) => match leading_http_status(text) {
                Some(status) => Self::of_status(status, at),
                None => TransportFailure::NotMcp { detail: "its body is not a JSON-RPC message".to_owned() },
            },
            StreamableHttpError::Deserialize(_) | StreamableHttpError::Sse(_) => {
                TransportFailure::NotMcp { detail: "its body is not JSON-RPC".to_owned() }
            }
            StreamableHttpError::UnexpectedEndOfStream | StreamableHttpError::TransportChannelClosed => {
                TransportFailure::Closed
            }
            StreamableHttpError::Io(e) => Self::of_chain(e, at),
            other => TransportFailure::Other { detail: innermost(other) },
        }
    }

    fn of_reqwest(e: &reqwest::Error, at: Attempt<'_>) -> Self {
        if e.is_timeout() {
            return TransportFailure::TimedOut;
        }
        let url = e.url();
        if e.is_dns() {
            let host = url.and_then(|u| u.host_str()).unwrap_or(at.url);
            return TransportFailure::UnknownHost { host: host.to_owned() };
        }
        if let Some(failure) = Self::of_io_in(e, at) {
            return failure;
        }
        // Built without TLS, reqwest refuses an https URL before connecting:
        // a connect error with no I/O underneath.
        if e.is_connect() && url.is_some_and(|u| u.scheme() == "https") {
            return TransportFailure::TlsUnsupported;
        }
        TransportFailure::Other { detail: innermost(e) }
    }

    /// A failure named by an I/O error somewhere in `e`'s source chain.
    fn of_io_in(e: &(dyn StdError + 'static), at: Attempt<'_>) -> Option<Self> {
        let mut current = Some(e);
        while let Some(cause) = current {
            if let Some(io) = cause.downcast_ref::<std::io::Error>() {
                use std::io::ErrorKind;
                return match io.kind() {
                    ErrorKind::ConnectionRefused => Some(TransportFailure::ConnectionRefused { address: authority(at.url) }),
                    ErrorKind::TimedOut => Some(TransportFailure::TimedOut),
                    ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof => Some(TransportFailure::Closed),
                    _ => None,
                };
            }
            current = cause.source();
        }
        None
    }

    fn of_chain(e: &(dyn StdError + 'static), at: Attempt<'_>) -> Self {
        Self::of_io_in(e, at).unwrap_or_else(|| TransportFailure::Other { detail: innermost(e) })
    }

    fn of_status(status: u16, at: Attempt<'_>) -> Self {
        match status {
            401 => TransportFailure::Unauthorized { token_sent: at.token_sent },
            403 => TransportFailure::Forbidden,
            404 => TransportFailure::NotFound { path: path_of(at.url) },
            status => TransportFailure::HttpStatus { status },
        }
    }
}

/// The HTTP status of a `server/discover` that rmcp turned into a JSON-RPC
/// error. rmcp keeps no typed status for a 4xx with no JSON-RPC body: it
/// synthesises `invalid_request("server/discover rejected with HTTP 404 Not
/// Found: …")`, so the status is read back from that fixed prefix.
fn rejected_discover_status(message: &str) -> Option<u16> {
    leading_http_status(message.strip_prefix("server/discover rejected with ")?)
}

/// `NNN` of text starting `HTTP NNN` (how rmcp words an HTTP failure it keeps
/// only as text).
fn leading_http_status(text: &str) -> Option<u16> {
    let digits = text.strip_prefix("HTTP ")?.get(..3)?;
    digits.parse().ok().filter(|s| (100..=599).contains(s))
}

fn status_reason(status: u16) -> Option<&'static str> {
    reqwest::StatusCode::from_u16(status).ok()?.canonical_reason()
}

/// `host:port` of a URL (the port the scheme implies when none is given).
fn authority(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => url.to_owned(),
        },
        Err(_) => url.to_owned(),
    }
}

/// The path of a URL (`/` when it has none).
fn path_of(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.path().to_owned())
}

/// The innermost cause's text: the most specific words in the chain, and
/// the only ones that name no wrapper type.
fn innermost(e: &(dyn StdError + 'static)) -> String {
    let mut current = e;
    while let Some(cause) = current.source() {
        current = cause;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const AT: Attempt<'static> = Attempt { url: "http://127.0.0.1:8080/wrong", token_sent: false };

    #[test]
    fn a_rejected_discover_reads_as_its_http_status() {
        let e = ClientInitializeError::JsonRpcError(rmcp::model::ErrorData::invalid_request(
            "server/discover rejected with HTTP 404 Not Found: ",
            None,
        ));
        assert_eq!(TransportFailure::of_initialize(&e, AT), TransportFailure::NotFound { path: "/wrong".into() });
        let e = ClientInitializeError::JsonRpcError(rmcp::model::ErrorData::invalid_request("bad version", None));
        assert!(matches!(TransportFailure::of_initialize(&e, AT), TransportFailure::Rejected { code: -32600, .. }));
    }

    #[test]
    fn a_request_timeout_is_timed_out() {
        let e = ServiceError::Timeout { timeout: Duration::from_secs(3) };
        assert_eq!(TransportFailure::of_service(&e, AT), Some(TransportFailure::TimedOut));
        assert_eq!(TransportFailure::of_service(&ServiceError::UnexpectedResponse, AT), None);
    }

    #[test]
    fn statuses_read_from_rmcp_text_only_from_its_prefix() {
        assert_eq!(leading_http_status("HTTP 401 Unauthorized: nope"), Some(401));
        assert_eq!(leading_http_status("HTTP 2"), None);
        assert_eq!(leading_http_status("expect accepted or json"), None);
        assert_eq!(rejected_discover_status("server/discover rejected with HTTP 405 Method Not Allowed: x"), Some(405));
    }

    #[test]
    fn addresses_and_paths_come_from_the_url() {
        assert_eq!(authority("http://localhost/mcp"), "localhost:80");
        assert_eq!(authority("http://[::1]:9/mcp"), "[::1]:9");
        assert_eq!(path_of("http://h:1"), "/");
    }

    #[test]
    fn texts_name_no_rust_type_and_say_what_to_do() {
        let all = [
            TransportFailure::ConnectionRefused { address: "127.0.0.1:1".into() },
            TransportFailure::NotFound { path: "/x".into() },
            TransportFailure::Unauthorized { token_sent: false },
            TransportFailure::HttpStatus { status: 502 },
            TransportFailure::Incompatible { offered: vec!["2025-06-18".into()] },
        ];
        for f in all {
            let text = f.to_string();
            assert!(!text.contains("::") && !text.contains('{') && !text.contains("Error"), "{text}");
        }
        assert_eq!(TransportFailure::HttpStatus { status: 502 }.to_string(), "the server answered HTTP 502 Bad Gateway");
    }
}
