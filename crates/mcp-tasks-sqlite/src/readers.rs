//! A small pool of read-only connections. In WAL mode readers never wait for
//! the writer, so `tasks/get` does not queue behind a group commit.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_store::StoreError;
use rusqlite::Connection;

use crate::open::open_reader;

/// Idle read connections kept open; more are opened under load and closed
/// when the pool is full again. Enough for the reads a busy server overlaps:
/// a connection opened for one read parses the schema, prepares its
/// statements and starts with a cold page cache, and profiles showed that
/// churn growing with the store (3 opens in 2 000 polls of one task, 29 over
/// 20 000 stored, with 4 kept). Each idle one holds at most its page cache.
pub(crate) const MAX_IDLE_READERS: usize = 16;

/// Read-only connections to one database file.
pub(crate) struct Readers {
    path: PathBuf,
    busy_timeout: Duration,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    /// A pool for `path` (connections open on first use).
    pub(crate) fn new(path: PathBuf, busy_timeout: Duration) -> Arc<Self> {
        Arc::new(Readers { path, busy_timeout, idle: Mutex::new(Vec::new()) })
    }

    fn take(&self) -> Result<Connection, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match idle {
            Some(conn) => Ok(conn),
            None => open_reader(&self.path, self.busy_timeout),
        }
    }

    fn give_back(&self, conn: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE_READERS {
            idle.push(conn);
        }
    }

    /// Runs `op` on a read connection on tokio's blocking pool.
    pub(crate) async fn read<T, F>(self: &Arc<Self>, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let conn = pool.take()?;
            let result = op(&conn);
            pool.give_back(conn);
            result
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("read task failed: {e}")))?
    }
}
