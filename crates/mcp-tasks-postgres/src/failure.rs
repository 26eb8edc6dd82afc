//! What goes wrong talking to PostgreSQL, and how it reaches callers as a
//! [`StoreError`].

use deadpool_postgres::PoolError;
use mcp_tasks_store::StoreError;
use tokio_postgres::error::SqlState;

/// A failure inside the store, before it is reported.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The database said no, or the connection broke.
    Db(tokio_postgres::Error),
    /// No pooled connection could be had.
    Pool(PoolError),
    /// A failure that already has its store error (a decoding error, a
    /// refused operation).
    Store(StoreError),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Failure::Db(e)
    }
}

impl From<PoolError> for Failure {
    fn from(e: PoolError) -> Self {
        Failure::Pool(e)
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Store(e)
    }
}

/// Ways a connection or server can be lost: broken or closed connections,
/// a server shutting down or a backend terminated by an operator.
fn is_connection_loss(code: &SqlState) -> bool {
    code.code().starts_with("08")
        || [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW, SqlState::DATABASE_DROPPED]
            .contains(code)
}

/// The message of a database error without Rust's debug formatting.
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

impl Failure {
    /// Whether running the same transaction again may succeed: PostgreSQL
    /// chose it as a deadlock victim or a serialization failure.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self, Failure::Db(e) if e.code().is_some_and(|c|
            *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE))
    }

    /// Whether the database refused what was asked (a statement or value
    /// it would not take) and rolled the transaction back, as opposed to
    /// the connection or server going away, after which a commit may or may
    /// not have happened. A failure of ours (a row that does not decode, an
    /// operation refused) counts as a refusal: it stops the transaction
    /// before its commit.
    pub(crate) fn is_refusal(&self) -> bool {
        match self {
            Failure::Db(e) => e.code().is_some_and(|code| !is_connection_loss(code)),
            Failure::Store(_) => true,
            Failure::Pool(_) => false,
        }
    }

    /// The error callers see. A lost connection or an unreachable server
    /// says the database is unavailable; the pool reconnects by itself, so
    /// the next operation may well succeed.
    pub(crate) fn into_store(self) -> StoreError {
        match self {
            Failure::Store(e) => e,
            Failure::Db(e) => match e.code() {
                Some(code) if !is_connection_loss(code) => {
                    StoreError::Unavailable(format!("PostgreSQL refused the operation: {}", describe(&e)))
                }
                _ => unavailable(describe(&e)),
            },
            Failure::Pool(PoolError::Backend(e)) => unavailable(describe(&e)),
            Failure::Pool(PoolError::Timeout(_)) => unavailable("no connection could be had in time".to_owned()),
            Failure::Pool(PoolError::Closed) => StoreError::Closed,
            Failure::Pool(e) => unavailable(e.to_string()),
        }
    }
}

/// `StoreError::Unavailable` saying the database is unavailable, and why.
fn unavailable(why: String) -> StoreError {
    StoreError::Unavailable(format!("the PostgreSQL database is unavailable: {why}"))
}
