//! What can go wrong, each error naming what was wrong.

use std::path::PathBuf;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;

use crate::failure::{Attempt, TransportFailure};

/// An error from the handle book.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// The book's directory could not be created.
    #[error("cannot create the handle book's directory {path}: {source}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused an operation on the book.
    #[error("handle book {path}: {source}")]
    Sqlite {
        /// The book's file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A stored argument column is not JSON (the file was edited by hand or damaged).
    #[error("handle book {path}: the stored arguments of task {task_id} are not JSON: {source}")]
    CorruptArguments {
        /// The book's file.
        path: PathBuf,
        /// The task whose row is damaged.
        task_id: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// A blocking book call could not finish (its worker thread died).
    #[error("handle book worker stopped: {0}")]
    Worker(String),
}

/// An error from the tasks client.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The URL is not an `http://` or `https://` URL.
    #[error("not an http(s) URL: {url}")]
    InvalidUrl {
        /// What was given.
        url: String,
    },
    /// Tool arguments must be a JSON object.
    #[error("tool arguments must be a JSON object, got {got}")]
    ArgumentsNotAnObject {
        /// The JSON type that was given instead.
        got: &'static str,
    },
    /// `server/discover` failed: the server is unreachable, legacy-only, or refused us.
    #[error("cannot start an MCP session with {url}: {failure}")]
    Connect {
        /// The server.
        url: String,
        /// What happened (rmcp's error, sorted; its full chain goes to the debug log).
        failure: TransportFailure,
    },
    /// The server answered a request with a JSON-RPC error.
    #[error("{method} failed with JSON-RPC error {code}: {message}")]
    Rpc {
        /// The method that failed (`tools/call`, `tasks/get`, ...).
        method: &'static str,
        /// The error code.
        code: i32,
        /// The server's message.
        message: String,
        /// The server's `data`, if any.
        data: Option<serde_json::Value>,
    },
    /// The server no longer knows this task (unknown or expired id: -32602 on a `tasks/*` call).
    #[error("task {task_id} is unknown to the server (expired or never existed): {message}")]
    TaskNotFound {
        /// The id.
        task_id: String,
        /// The server's message.
        message: String,
    },
    /// The request never got an answer (network, server down, transport closed).
    #[error("{method} got no answer from {url}: {failure}")]
    Transport {
        /// The method.
        method: &'static str,
        /// The server.
        url: String,
        /// What happened (rmcp's error, sorted; its full chain goes to the debug log).
        failure: TransportFailure,
    },
    /// The server answered with something this method cannot return.
    #[error("{method}: the server's answer does not fit the protocol: {detail}")]
    Protocol {
        /// The method.
        method: &'static str,
        /// What was wrong with it.
        detail: String,
    },
    /// The server kept asking for input on `tools/call` beyond the round cap.
    #[error("tools/call still asked for input after {rounds} rounds")]
    TooManyInputRounds {
        /// The cap.
        rounds: usize,
    },
    /// The server asked the same `tools/call` input questions again after
    /// receiving the same answers (e.g. it needs an answer the user declined).
    #[error("tools/call asked again for {} after the same answers; it needs answers this client did not give", keys.join(", "))]
    InputNotAccepted {
        /// The keys asked again.
        keys: Vec<String>,
    },
    /// The server stayed unreachable longer than the client is willing to wait.
    #[error("gave up on task {task_id}: the server was unreachable for {waited_ms} ms (last error: {last_error})")]
    Unreachable {
        /// The task.
        task_id: String,
        /// How long it kept failing.
        waited_ms: u64,
        /// The last transport error.
        last_error: String,
    },
    /// The server created task `task_id` but the handle book could not record
    /// it: the task runs, but a restarted client would not know to resume it.
    #[error("task {task_id} was created but not recorded in the handle book: {source}")]
    Unrecorded {
        /// The task that exists on the server.
        task_id: String,
        /// Why the book refused.
        #[source]
        source: BookError,
    },
    /// The handle book failed.
    #[error(transparent)]
    Book(#[from] BookError),
}

impl ClientError {
    /// Sorts a failed `server/discover` at `at` into a readable [`ClientError::Connect`].
    pub(crate) fn from_initialize(at: Attempt<'_>, e: &ClientInitializeError) -> Self {
        tracing::debug!(url = at.url, error = ?e, "server/discover failed");
        ClientError::Connect { url: at.url.to_owned(), failure: TransportFailure::of_initialize(e, at) }
    }

    /// Sorts an rmcp error from `method` at `at` into the right variant.
    pub(crate) fn from_service(method: &'static str, at: Attempt<'_>, task_id: Option<&str>, e: ServiceError) -> Self {
        if let Some(failure) = TransportFailure::of_service(&e, at) {
            tracing::debug!(method, url = at.url, error = ?e, "request got no answer");
            return ClientError::Transport { method, url: at.url.to_owned(), failure };
        }
        match e {
            ServiceError::McpError(err) => {
                if let Some(task_id) = task_id
                    && err.code == rmcp::model::ErrorCode::INVALID_PARAMS
                {
                    return ClientError::TaskNotFound { task_id: task_id.to_owned(), message: err.message.into_owned() };
                }
                ClientError::Rpc { method, code: err.code.0, message: err.message.into_owned(), data: err.data }
            }
            ServiceError::UnexpectedResponse => {
                ClientError::Protocol { method, detail: "unexpected result type".to_owned() }
            }
            other => ClientError::Protocol { method, detail: other.to_string() },
        }
    }

    /// What happened to a request that got no MCP answer (a failed
    /// `server/discover` or request), if that is what this error is.
    pub fn transport_failure(&self) -> Option<&TransportFailure> {
        match self {
            ClientError::Connect { failure, .. } | ClientError::Transport { failure, .. } => Some(failure),
            _ => None,
        }
    }

    /// Whether trying the same request again later may succeed: a transport
    /// failure that [`TransportFailure::is_transient`] says may pass (a
    /// refused token or a wrong path will not).
    pub fn is_transient(&self) -> bool {
        self.transport_failure().is_some_and(TransportFailure::is_transient)
    }
}
