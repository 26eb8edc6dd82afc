//! Group commit: one thread owns the write connection and commits whatever
//! is queued together.
//!
//! Callers send a job (a closure over the connection) with a oneshot reply.
//! The thread takes every queued job (up to [`MAX_BATCH`]), runs each inside
//! its own savepoint of ONE `BEGIN IMMEDIATE` transaction, commits once (one
//! fsync with `synchronous = FULL`), and only then replies to all of them.
//! So `create` returns only after its row is durable, and 64 concurrent
//! creations cost about one fsync, not 64. A job that fails rolls back to its
//! savepoint and leaves the others in the batch alone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use mcp_tasks_store::StoreError;
use rusqlite::Connection;
use tokio::sync::oneshot;

/// Most jobs one transaction carries, so one commit's latency stays bounded.
pub(crate) const MAX_BATCH: usize = 512;

/// A job's result, held until the batch's commit decides its fate.
trait Pending: Send {
    /// Replies with the job's result, or with the commit's error if the
    /// commit failed (then nothing the job did was kept).
    fn reply(self: Box<Self>, commit: Result<(), StoreError>);
}

struct Held<T> {
    reply: oneshot::Sender<Result<T, StoreError>>,
    result: Result<T, StoreError>,
}

impl<T: Send> Pending for Held<T> {
    fn reply(self: Box<Self>, commit: Result<(), StoreError>) {
        let result = match commit {
            Ok(()) => self.result,
            Err(e) => Err(e),
        };
        // The caller may have stopped waiting; its job is committed anyway.
        let _ = self.reply.send(result);
    }
}

/// A queued write: given the connection it runs, given `None` (the batch
/// could not begin) it only gives back its reply handle.
type Job = Box<dyn FnOnce(Option<&Connection>) -> Box<dyn Pending> + Send>;

/// What the writer has done since the store opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Transactions committed (each one fsync with `synchronous = FULL`).
    pub commits: u64,
    /// Writes (creates, update batches, claims, poll flushes, …) those
    /// commits carried.
    pub writes: u64,
}

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    writes: AtomicU64,
}

/// The handle callers use to reach the writer thread.
pub(crate) struct Writer {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Writer {
    /// Starts the writer thread on `conn`.
    pub(crate) fn start(conn: Connection) -> Result<Self, StoreError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let counters = Arc::new(Counters::default());
        let shared = Arc::clone(&counters);
        let thread = std::thread::Builder::new()
            .name("mcp-tasks-sqlite-writer".into())
            .spawn(move || run(conn, queue, &shared))
            .map_err(|e| StoreError::Unavailable(format!("cannot start the writer thread: {e}")))?;
        Ok(Writer {
            jobs: Some(jobs),
            thread: Some(thread),
            counters,
        })
    }

    /// Commits and writes so far.
    pub(crate) fn stats(&self) -> WriteStats {
        WriteStats {
            commits: self.counters.commits.load(Ordering::Relaxed),
            writes: self.counters.writes.load(Ordering::Relaxed),
        }
    }

    /// Runs `op` in the next group commit; returns once that commit is durable.
    pub(crate) async fn write<T, F>(&self, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, done) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let result = match conn {
                Some(conn) => in_savepoint(conn, op),
                None => Err(StoreError::Unavailable("the write was not run".into())),
            };
            Box::new(Held { reply, result })
        });
        self.jobs
            .as_ref()
            .ok_or(StoreError::Closed)?
            .send(job)
            .map_err(|_| StoreError::Closed)?;
        done.await.map_err(|_| StoreError::Closed)?
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread after its current batch; joining
        // means the file is closed (and the WAL checkpointed) when we return.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Runs `op` so that its failure undoes only its own writes.
fn in_savepoint<T>(
    conn: &Connection,
    op: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    conn.execute_batch("SAVEPOINT job")
        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
    let result = op(conn);
    let end = if result.is_ok() {
        "RELEASE job"
    } else {
        "ROLLBACK TO job; RELEASE job"
    };
    match conn.execute_batch(end) {
        Ok(()) => result,
        Err(e) => Err(StoreError::Unavailable(format!("ending savepoint: {e}"))),
    }
}

fn run(conn: Connection, queue: mpsc::Receiver<Job>, counters: &Counters) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let writes = batch.len() as u64;
        if commit_batch(&conn, batch) {
            counters.commits.fetch_add(1, Ordering::Relaxed);
            counters.writes.fetch_add(writes, Ordering::Relaxed);
        }
    }
}

/// Runs and commits one batch, then replies; returns whether it committed.
fn commit_batch(conn: &Connection, batch: Vec<Job>) -> bool {
    let began = conn.execute_batch("BEGIN IMMEDIATE");
    let mut held: Vec<Box<dyn Pending>> = Vec::with_capacity(batch.len());
    if let Err(e) = began {
        let error = StoreError::Unavailable(format!("cannot begin a write transaction: {e}"));
        for job in batch {
            job(None).reply(Err(error.clone()));
        }
        return false;
    }
    for job in batch {
        held.push(job(Some(conn)));
    }
    let commit = conn.execute_batch("COMMIT").map_err(|e| {
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        tracing::error!(error = %e, "group commit failed; {} jobs rolled back", held.len());
        StoreError::Unavailable(format!("commit failed: {e}"))
    });
    let committed = commit.is_ok();
    for pending in held {
        pending.reply(commit.clone());
    }
    committed
}
