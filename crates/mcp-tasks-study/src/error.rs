//! What can stop a study run, in one line a reader can act on.

/// A study that could not run.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A parameter outside the range the model is defined on.
    #[error("invalid --{name}: {reason}")]
    InvalidParameter {
        /// The command-line name of the parameter (without dashes).
        name: &'static str,
        /// What was wrong with it.
        reason: String,
    },
    /// An experiment name that is not one of e1…e5 or all.
    #[error("unknown experiment {0:?} (expected e1, e2, e3, e4, e5 or all)")]
    UnknownExperiment(String),
    /// The project's runtime, store or policy validation refused something.
    #[error("{context}: {reason}")]
    Runtime {
        /// What the study was doing.
        context: String,
        /// The runtime's own message.
        reason: String,
    },
    /// A figure could not be written.
    #[error("cannot write figure {path}: {reason}")]
    Plot {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

impl StudyError {
    /// A parameter error.
    pub fn param(name: &'static str, reason: impl Into<String>) -> Self {
        StudyError::InvalidParameter { name, reason: reason.into() }
    }

    /// Wraps an error from the runtime or a store with what the study was doing.
    pub fn runtime(context: impl Into<String>, err: impl std::fmt::Display) -> Self {
        StudyError::Runtime { context: context.into(), reason: err.to_string() }
    }
}
