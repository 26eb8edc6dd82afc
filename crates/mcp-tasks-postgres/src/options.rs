//! [`PostgresOptions`]: the few knobs of a [`PostgresStore`](crate::PostgresStore).

use std::time::Duration;

/// Options for [`PostgresStore::open_with`](crate::PostgresStore::open_with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Most connections the pool holds (creations share one of them).
    pub max_connections: usize,
    /// How long establishing one connection may take before the operation
    /// that needed it fails with `StoreError::Unavailable`.
    pub connect_timeout: Duration,
    /// How long an operation waits for a free pooled connection.
    pub wait_timeout: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            max_connections: 16,
            connect_timeout: Duration::from_secs(5),
            wait_timeout: Duration::from_secs(10),
        }
    }
}
