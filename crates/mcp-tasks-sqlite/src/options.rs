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
    /// Hold the serving lock for as long as the store is open: a second
    /// store opened with it on the same file fails with
    /// `StoreError::InUse`. A server (whose start-up triage takes every
    /// lease) must set it; operator tools that only inspect or requeue must
    /// not, so they keep working beside a running server.
    pub serve_lock: bool,
    /// Read-only connections open at most at once; a read beyond them waits
    /// for one to be free. Default: [`default_read_connections`].
    pub read_connections: usize,
}

/// Twice the machine's cores, within 4 to 16: enough reads in flight to keep
/// every core busy while some wait on the disk, few enough that each
/// connection's page cache and file mapping stay warm (see `readers.rs`).
pub fn default_read_connections() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (2 * cores).clamp(4, 16)
}

impl SqliteOptions {
    /// The options of a serving process: the defaults plus the serving lock.
    pub fn serving() -> Self {
        SqliteOptions { serve_lock: true, ..SqliteOptions::default() }
    }
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions { busy_timeout: DEFAULT_BUSY_TIMEOUT, serve_lock: false, read_connections: default_read_connections() }
    }
}
