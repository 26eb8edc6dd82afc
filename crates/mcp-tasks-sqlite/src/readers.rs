//! A bounded pool of read-only connections. In WAL mode readers never wait
//! for the writer, so `tasks/get` does not queue behind a group commit.
//!
//! The bound keeps the connections few and warm. Each keeps its own page
//! cache and SQLite drops it whenever another connection commits; opening
//! one per concurrent read (up to 16 under a 64-client load) left many cold
//! connections. Bounded, polls of a 100 k store took 17% fewer page faults
//! and their p99.9 fell from 10.9 ms to 3.3 ms in a side-by-side run (see
//! docs/benchmark-history.md). A read beyond the bound waits for a connection instead
//! of opening one.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_store::StoreError;
use rusqlite::Connection;
use tokio::sync::Semaphore;

use crate::open::open_reader;

/// Read-only connections to one database file, at most `bound` at once.
pub(crate) struct Readers {
    path: PathBuf,
    busy_timeout: Duration,
    /// One permit per connection that may exist; a read holds one from
    /// before it takes a connection until after it gives it back, so the
    /// idle list never holds more than the bound and never runs dry while
    /// a permit is free.
    permits: Arc<Semaphore>,
    idle: Mutex<Vec<Connection>>,
    opened: AtomicUsize,
}

impl Readers {
    /// A pool for `path` of at most `bound` connections (at least one),
    /// opened on first use.
    pub(crate) fn new(path: PathBuf, busy_timeout: Duration, bound: usize) -> Arc<Self> {
        Arc::new(Readers {
            path,
            busy_timeout,
            permits: Arc::new(Semaphore::new(bound.max(1))),
            idle: Mutex::new(Vec::new()),
            opened: AtomicUsize::new(0),
        })
    }

    /// Connections opened so far (a connection is opened once and reused).
    #[cfg(test)]
    pub(crate) fn opened(&self) -> usize {
        self.opened.load(Ordering::Relaxed)
    }

    fn take(&self) -> Result<Connection, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match idle {
            Some(conn) => Ok(conn),
            None => {
                let conn = open_reader(&self.path, self.busy_timeout)?;
                self.opened.fetch_add(1, Ordering::Relaxed);
                Ok(conn)
            }
        }
    }

    fn give_back(&self, conn: Connection) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
    }

    /// Runs a point read `op` (one row by primary key) on the calling
    /// thread when a connection is idle, else as [`Readers::read`] does.
    ///
    /// Handing a read to the blocking pool costs two thread wake-ups, more
    /// than a primary-key lookup in a mapped file: answered here, `tasks/get`
    /// at 32 clients went from 0.89× to 1.09–1.14× the in-memory peer
    /// (docs/benchmark-history.md, 2026-12-07). The caller's thread must never sleep, so the inline
    /// attempt gives SQLite no busy timeout: a read that meets a lock (or
    /// fails for any reason) runs again on the pool with the full timeout,
    /// which a read, changing nothing, may. What it cannot avoid is a page
    /// fault on a page of the file no longer cached: that blocks the thread
    /// for one disk read.
    pub(crate) async fn read_point<T, F>(self: &Arc<Self>, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Fn(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        if let Ok(permit) = self.permits.try_acquire() {
            let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            if let Some(conn) = idle {
                let inline = conn.busy_timeout(Duration::ZERO).map_err(crate::row::unavailable).and_then(|()| op(&conn));
                let restored = conn.busy_timeout(self.busy_timeout);
                self.give_back(conn);
                drop(permit);
                if let (Ok(value), Ok(())) = (inline, restored) {
                    return Ok(value);
                }
            }
        }
        self.read(op).await
    }

    /// Runs `op` on a read connection on tokio's blocking pool, waiting
    /// (without blocking a thread) while every connection is in use.
    pub(crate) async fn read<T, F>(self: &Arc<Self>, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Unavailable("the read pool is closed".to_owned()))?;
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let conn = pool.take()?;
            let result = op(&conn);
            pool.give_back(conn);
            result
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("read task failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    fn database() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("readers.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x INTEGER);").unwrap();
        (dir, path)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_beyond_the_bound_waits_for_a_connection_instead_of_opening_one() {
        let (_dir, path) = database();
        let pool = Readers::new(path, Duration::from_secs(1), 2);
        // Two reads hold both connections until released.
        let mut releases = Vec::new();
        let mut holders = Vec::new();
        let (started, mut holding) = tokio::sync::mpsc::unbounded_channel::<()>();
        for _ in 0..2 {
            let (release, wait) = mpsc::channel::<()>();
            releases.push(release);
            let (pool, started) = (Arc::clone(&pool), started.clone());
            holders.push(tokio::spawn(async move {
                pool.read(move |conn| {
                    started.send(()).unwrap();
                    wait.recv().unwrap();
                    conn.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).map_err(crate::row::unavailable)
                })
                .await
            }));
        }
        for _ in 0..2 {
            holding.recv().await.unwrap();
        }
        let mut third = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move {
                pool.read(|conn| conn.query_row("SELECT 7", [], |r| r.get::<_, i64>(0)).map_err(crate::row::unavailable))
                    .await
            })
        };
        // An unbounded pool would open a third connection and answer at once.
        let early = tokio::time::timeout(Duration::from_millis(200), &mut third).await;
        assert!(early.is_err(), "the third read ran while both connections were held");
        for release in releases {
            release.send(()).unwrap();
        }
        for holder in holders {
            assert_eq!(holder.await.unwrap().unwrap(), 0);
        }
        assert_eq!(third.await.unwrap().unwrap(), 7);
        assert_eq!(pool.opened(), 2, "the waiting read reused a connection");
    }

    fn count(conn: &Connection) -> Result<i64, StoreError> {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).map_err(crate::row::unavailable)
    }

    /// The thread a read ran on.
    fn read_on(conn: &Connection) -> Result<std::thread::ThreadId, StoreError> {
        count(conn).map(|_| std::thread::current().id())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_point_read_runs_on_the_callers_thread_once_a_connection_is_idle() {
        let (_dir, path) = database();
        let pool = Readers::new(path, Duration::from_secs(1), 2);
        let caller = std::thread::current().id();
        assert_ne!(pool.read_point(read_on).await.unwrap(), caller, "no connection idle yet: the pool opens one");
        assert_eq!(pool.read_point(read_on).await.unwrap(), caller, "then answered where it was asked");
        assert_eq!(pool.opened(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_point_read_never_waits_for_a_lock_on_the_callers_thread_and_retries_on_the_pool() {
        let (_dir, path) = database();
        let pool = Readers::new(path, Duration::from_secs(10), 2);
        pool.read(count).await.unwrap(); // one idle connection
        let caller = std::thread::current().id();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&calls);
        let answer = pool
            .read_point(move |conn| {
                let timeout: i64 = conn.pragma_query_value(None, "busy_timeout", |r| r.get(0)).unwrap();
                let inline = std::thread::current().id() == caller;
                seen.lock().unwrap().push((inline, timeout));
                // As a read meeting a lock fails without a busy timeout.
                if inline { Err(StoreError::Unavailable("database is locked".into())) } else { count(conn) }
            })
            .await;
        assert_eq!(answer.unwrap(), 0, "answered by the pool");
        let calls = calls.lock().unwrap().clone();
        assert_eq!(calls, vec![(true, 0), (false, 10_000)], "(on the caller's thread, busy timeout in ms) of each run");
        assert_eq!(pool.opened(), 1, "one connection, its timeout restored");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_point_read_that_fails_inline_and_on_the_pool_reports_the_error() {
        let (_dir, path) = database();
        let pool = Readers::new(path, Duration::from_secs(1), 2);
        pool.read(count).await.unwrap();
        let err = pool
            .read_point(|conn| {
                conn.query_row("SELECT x FROM missing", [], |r| r.get::<_, i64>(0)).map_err(crate::row::unavailable)
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no such table: missing"), "{err}");
        // The failed inline attempt gave its connection back.
        assert_eq!(pool.read_point(read_on).await.unwrap(), std::thread::current().id(), "answered inline");
        assert_eq!(pool.opened(), 1);
    }
}
