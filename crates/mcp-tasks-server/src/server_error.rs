//! [`ServerError`]: why a server (stand-alone or drop-in) could not be
//! built or run.

use mcp_tasks_runtime::RuntimeError;

/// Why a server could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The runtime refused its configuration (policy, duplicate tool, …).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A tool's declaration cannot be served.
    #[error("tool {tool:?}: {reason}")]
    Tool {
        /// The tool.
        tool: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Listening or serving failed.
    #[error("serving failed: {0}")]
    Io(#[from] std::io::Error),
    /// The connection limits contradict each other or the body limit.
    #[error("connection limits: {0}")]
    Limits(String),
    /// The configured `requestState` key is too short.
    #[error(transparent)]
    RequestStateKey(#[from] crate::request_state::ShortKey),
}
