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

use crate::file_watch::FileWatch;

/// Most jobs one transaction carries, so one commit's latency stays bounded.
pub(crate) const MAX_BATCH: usize = 512;

/// How many prepared statements the write connection keeps.
const WRITE_STATEMENTS: usize = 128;

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

/// What the writer thread is asked to do.
enum Message {
    /// A write for the next group commit.
    Write(Job),
    /// Copy the WAL into the database file, outside any transaction.
    Checkpoint(oneshot::Sender<Result<(), StoreError>>),
}

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
    jobs: Option<mpsc::Sender<Message>>,
    thread: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Writer {
    /// Starts the writer thread on `conn`, which writes only while `watch`
    /// says the path still names the file `conn` opened.
    pub(crate) fn start(conn: Connection, watch: Arc<FileWatch>) -> Result<Self, StoreError> {
        // Room for every statement a write runs (the guarded updates come
        // in many shapes), so none is parsed again per job.
        conn.set_prepared_statement_cache_capacity(WRITE_STATEMENTS);
        let (jobs, queue) = mpsc::channel::<Message>();
        let counters = Arc::new(Counters::default());
        let shared = Arc::clone(&counters);
        let thread = std::thread::Builder::new()
            .name("mcp-tasks-sqlite-writer".into())
            .spawn(move || run(conn, queue, &shared, &watch))
            .map_err(|e| StoreError::Unavailable(format!("cannot start the writer thread: {e}")))?;
        Ok(Writer { jobs: Some(jobs), thread: Some(thread), counters })
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
        self.send(Message::Write(job))?;
        done.await.map_err(|_| StoreError::Closed)?
    }

    /// Checkpoints the WAL into the database file (truncating the WAL) after
    /// every write queued before it has committed.
    pub(crate) async fn checkpoint(&self) -> Result<(), StoreError> {
        let (reply, done) = oneshot::channel();
        self.send(Message::Checkpoint(reply))?;
        done.await.map_err(|_| StoreError::Closed)?
    }

    fn send(&self, message: Message) -> Result<(), StoreError> {
        self.jobs.as_ref().ok_or(StoreError::Closed)?.send(message).map_err(|_| StoreError::Closed)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread after its current batch and a
        // last checkpoint; joining means the file is closed when we return.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Runs `op` so that its failure undoes only its own writes.
/// Every job runs these, so they are prepared once (cached), not parsed per job.
fn in_savepoint<T>(conn: &Connection, op: impl FnOnce(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
    let run = |sql: &str| conn.prepare_cached(sql).and_then(|mut s| s.execute([])).map(drop);
    run("SAVEPOINT job").map_err(|e| StoreError::Unavailable(e.to_string()))?;
    let result = op(conn);
    let end = match &result {
        Ok(_) => run("RELEASE job"),
        Err(_) => run("ROLLBACK TO job").and_then(|()| run("RELEASE job")),
    };
    match end {
        Ok(()) => result,
        Err(e) => Err(StoreError::Unavailable(format!("ending savepoint: {e}"))),
    }
}

fn run(conn: Connection, queue: mpsc::Receiver<Message>, counters: &Counters, watch: &FileWatch) {
    while let Ok(first) = queue.recv() {
        let mut batch = Vec::new();
        let mut checkpoint = None;
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Write(job) => batch.push(job),
                // Writes queued after it wait for the next batch.
                Message::Checkpoint(reply) => {
                    checkpoint = Some(reply);
                    break;
                }
            }
            if batch.len() < MAX_BATCH {
                next = queue.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            if let Err(lost) = watch.check() {
                refuse(batch, &lost);
            } else {
                commit_batch(&conn, batch, counters);
            }
        }
        if let Some(reply) = checkpoint {
            let _ = reply.send(watch.check().and_then(|()| checkpoint_wal(&conn)));
        }
    }
    // The store is closing: leave the database file complete on its own, so
    // a copy of it alone is a backup. (Closing this connection does not do
    // it while read connections are still open.)
    if watch.check().is_ok()
        && let Err(e) = checkpoint_wal(&conn)
    {
        tracing::warn!(error = %e, "WAL checkpoint at close failed; the -wal file still holds the newest writes");
    }
}

/// Answers every job of a batch with `error` without running it.
fn refuse(batch: Vec<Job>, error: &StoreError) {
    for job in batch {
        job(None).reply(Err(error.clone()));
    }
}

/// `PRAGMA wal_checkpoint(TRUNCATE)`: copies every committed page of the WAL
/// into the database file and empties the WAL; fails if a reader kept it
/// from finishing.
fn checkpoint_wal(conn: &Connection) -> Result<(), StoreError> {
    let (busy, log, copied): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(|e| StoreError::Unavailable(format!("WAL checkpoint failed: {e}")))?;
    if busy != 0 {
        return Err(StoreError::Unavailable(format!(
            "WAL checkpoint could not finish: a reader or writer kept it busy ({copied} of {log} pages copied)"
        )));
    }
    Ok(())
}

/// Runs and commits one batch, counts it, then replies (counted first, so a
/// caller that got its answer sees its write in the stats).
fn commit_batch(conn: &Connection, batch: Vec<Job>, counters: &Counters) {
    let began = conn.execute_batch("BEGIN IMMEDIATE");
    let mut held: Vec<Box<dyn Pending>> = Vec::with_capacity(batch.len());
    if let Err(e) = began {
        let error = StoreError::Unavailable(format!("cannot begin a write transaction: {e}"));
        refuse(batch, &error);
        return;
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
    if commit.is_ok() {
        counters.commits.fetch_add(1, Ordering::Relaxed);
        counters.writes.fetch_add(held.len() as u64, Ordering::Relaxed);
    }
    for pending in held {
        pending.reply(commit.clone());
    }
}
