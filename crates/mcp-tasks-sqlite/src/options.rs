//! [`SqliteOptions`]: the few knobs of a [`SqliteStore`](crate::SqliteStore).

use std::time::Duration;

/// How long a connection waits for another process's lock by default.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Options for [`SqliteStore::open_with`](crate::SqliteStore::open_with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long a write (or read) waits for a lock another process holds on
    /// the file before failing with `StoreError::Unavailable`.
    pub busy_timeout: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
        }
    }
}
