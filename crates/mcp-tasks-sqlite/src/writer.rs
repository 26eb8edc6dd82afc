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
//!
//! A savepoint copies every page a job touches into the sub-journal, once
//! per savepoint, which made a creation's page copies ≈ a tenth of its
//! instructions. So a run of *repeatable* jobs (creations, claims, guarded
//! updates, poll instants: their outcome depends only on the database,
//! which a rollback restores, and on arguments they keep) shares one
//! savepoint; if any of them fails, the run is rolled back and each of its
//! jobs runs again in its own savepoint, as every other job always does.
//! A run that opens the transaction (the common case: a batch of creations
//! and completions) needs no savepoint at all: if one of its jobs fails,
//! the whole transaction, which holds nothing else, is rolled back and
//! begun again. Then no page is copied into a sub-journal (≈ 6% of a
//! creation's instructions with the shared savepoint).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use mcp_tasks_store::StoreError;
use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::file_watch::FileWatch;
use crate::write_tx::WriteTx;

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

/// A write that runs once: given the connection it runs in its own
/// savepoint, given `None` (the batch could not begin) it only gives back
/// its reply handle.
type Once = Box<dyn FnOnce(Option<&WriteTx>) -> Box<dyn Pending> + Send>;

/// A write that may run twice with the same outcome from the same database.
trait Repeatable: Send {
    /// Runs the write (in its own savepoint if `alone`), keeping its result;
    /// whether it succeeded.
    fn run(&mut self, tx: &WriteTx, alone: bool) -> bool;
    /// Replaces the kept result with `error` (the shared savepoint broke).
    fn fail(&mut self, error: StoreError);
    /// The kept result, to be sent once the commit decides its fate.
    fn held(self: Box<Self>) -> Box<dyn Pending>;
}

/// A queued write.
enum Job {
    /// Runs once, in its own savepoint.
    Once(Once),
    /// Runs with its neighbours under one savepoint, again alone if one failed.
    Repeatable(Box<dyn Repeatable>),
}

impl Job {
    /// The reply handle of a job that did not run.
    fn unrun(self) -> Box<dyn Pending> {
        match self {
            Job::Once(job) => job(None),
            Job::Repeatable(job) => job.held(),
        }
    }
}

struct RepeatableWrite<T, F> {
    op: F,
    reply: oneshot::Sender<Result<T, StoreError>>,
    result: Result<T, StoreError>,
}

impl<T, F> Repeatable for RepeatableWrite<T, F>
where
    T: Send + 'static,
    F: FnMut(&WriteTx) -> Result<T, StoreError> + Send + 'static,
{
    fn run(&mut self, tx: &WriteTx, alone: bool) -> bool {
        self.result = if alone { in_savepoint(tx, &mut self.op) } else { (self.op)(tx) };
        self.result.is_ok()
    }

    fn fail(&mut self, error: StoreError) {
        self.result = Err(error);
    }

    fn held(self: Box<Self>) -> Box<dyn Pending> {
        Box::new(Held { reply: self.reply, result: self.result })
    }
}

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
            .spawn(move || run(&WriteTx::new(conn), queue, &shared, &watch))
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
        F: FnOnce(&WriteTx) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, done) = oneshot::channel();
        let job: Once = Box::new(move |tx| {
            let result = match tx {
                Some(tx) => in_savepoint(tx, op),
                None => Err(not_run()),
            };
            Box::new(Held { reply, result })
        });
        self.send(Message::Write(Job::Once(job)))?;
        done.await.map_err(|_| StoreError::Closed)?
    }

    /// Like [`write`](Self::write), for an `op` whose outcome depends only
    /// on the database: it may run twice (see the module's doc), so it must
    /// touch nothing outside the connection.
    pub(crate) async fn write_repeatable<T, F>(&self, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&WriteTx) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, done) = oneshot::channel();
        let job = RepeatableWrite { op, reply, result: Err(not_run()) };
        self.send(Message::Write(Job::Repeatable(Box::new(job))))?;
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

fn not_run() -> StoreError {
    StoreError::Unavailable("the write was not run".into())
}

/// Runs one savepoint statement. Every job runs these, so they are
/// prepared once (cached), not parsed per job.
fn savepoint_sql(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql).and_then(|mut s| s.execute([])).map(drop)
}

/// Runs `op` so that its failure undoes only its own writes (its rows and
/// its count changes).
fn in_savepoint<T>(tx: &WriteTx, op: impl FnOnce(&WriteTx) -> Result<T, StoreError>) -> Result<T, StoreError> {
    let run = |sql: &str| savepoint_sql(tx, sql);
    run("SAVEPOINT job").map_err(|e| StoreError::Unavailable(e.to_string()))?;
    tx.tally().savepoint();
    let result = op(tx);
    let end = match &result {
        Ok(_) => run("RELEASE job"),
        Err(_) => run("ROLLBACK TO job").and_then(|()| run("RELEASE job")),
    };
    match (&result, &end) {
        (Ok(_), Ok(())) => tx.tally().release(),
        _ => tx.tally().roll_back(),
    }
    match end {
        Ok(()) => result,
        Err(e) => Err(StoreError::Unavailable(format!("ending savepoint: {e}"))),
    }
}

fn run(tx: &WriteTx, queue: mpsc::Receiver<Message>, counters: &Counters, watch: &FileWatch) {
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
                commit_batch(tx, batch, counters);
            }
        }
        if let Some(reply) = checkpoint {
            let _ = reply.send(watch.check().and_then(|()| checkpoint_wal(tx)));
        }
    }
    // The store is closing: leave the database file complete on its own, so
    // a copy of it alone is a backup. (Closing this connection does not do
    // it while read connections are still open.)
    if watch.check().is_ok()
        && let Err(e) = checkpoint_wal(tx)
    {
        tracing::warn!(error = %e, "WAL checkpoint at close failed; the -wal file still holds the newest writes");
    }
}

/// Answers every job of a batch with `error` without running it.
fn refuse(batch: Vec<Job>, error: &StoreError) {
    for job in batch {
        job.unrun().reply(Err(error.clone()));
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

/// `BEGIN IMMEDIATE`, with the tally emptied for the new transaction.
fn begin(tx: &WriteTx) -> Result<(), StoreError> {
    tx.tally().clear();
    tx.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| StoreError::Unavailable(format!("cannot begin a write transaction: {e}")))
}

/// Rolls the open transaction back, if SQLite has not already.
fn roll_back(tx: &WriteTx) {
    tx.tally().clear();
    if !tx.is_autocommit() {
        let _ = tx.execute_batch("ROLLBACK");
    }
}

/// Runs and commits one batch, counts it, then replies (counted first, so a
/// caller that got its answer sees its write in the stats).
fn commit_batch(tx: &WriteTx, batch: Vec<Job>, counters: &Counters) {
    if let Err(error) = begin(tx) {
        refuse(batch, &error);
        return;
    }
    let mut held: Vec<Box<dyn Pending>> = Vec::with_capacity(batch.len());
    let mut run: Vec<Box<dyn Repeatable>> = Vec::new();
    // Until a write has run, the transaction holds nothing else: a run that
    // fails then rolls the whole transaction back, so the run needs no
    // savepoint (no page copied into a sub-journal).
    let mut first = true;
    let mut jobs = batch.into_iter();
    while let Some(job) = jobs.next() {
        match job {
            Job::Repeatable(job) => run.push(job),
            Job::Once(job) => {
                if let Err(error) = run_together(tx, &mut run, &mut held, first) {
                    give_up(tx, held, std::iter::once(Job::Once(job)).chain(jobs), &error);
                    return;
                }
                first = false;
                held.push(job(Some(tx)));
            }
        }
    }
    if let Err(error) = run_together(tx, &mut run, &mut held, first) {
        give_up(tx, held, std::iter::empty(), &error);
        return;
    }
    // The batch's count changes go in with it, or nothing does.
    let commit = tx
        .tally()
        .write(tx)
        .and_then(|()| tx.execute_batch("COMMIT").map_err(|e| StoreError::Unavailable(format!("commit failed: {e}"))))
        .inspect_err(|e| {
            roll_back(tx);
            tracing::error!(error = %e, "group commit failed; {} jobs rolled back", held.len());
        });
    if commit.is_ok() {
        counters.commits.fetch_add(1, Ordering::Relaxed);
        counters.writes.fetch_add(held.len() as u64, Ordering::Relaxed);
    }
    for pending in held {
        pending.reply(commit.clone());
    }
}

/// The transaction was lost: answers the jobs that ran and those that did
/// not with `error`; nothing is committed (and nothing is left open, should
/// the rollback before the failed `BEGIN` itself have failed).
fn give_up(tx: &WriteTx, held: Vec<Box<dyn Pending>>, unrun: impl Iterator<Item = Job>, error: &StoreError) {
    roll_back(tx);
    tracing::error!(error = %error, "write transaction lost; {} jobs not committed", held.len());
    for pending in held {
        pending.reply(Err(error.clone()));
    }
    refuse(unrun.collect(), error);
}

/// How a run of repeatable writes went when run together.
enum Together {
    /// Every write succeeded; their results stand.
    Succeeded,
    /// One failed and the run was rolled back: each must run again alone.
    RolledBack,
    /// Rolling back or beginning again failed: each fails with this error
    /// (and, if the transaction was lost, so does the rest of the batch).
    Broken { error: StoreError, transaction_lost: bool },
}

/// Runs `jobs` together (under one savepoint, or with none if `first`),
/// again each in its own savepoint if one failed, and holds their results.
/// An error means the transaction was lost (the jobs are held, failed).
fn run_together(
    tx: &WriteTx,
    jobs: &mut Vec<Box<dyn Repeatable>>,
    held: &mut Vec<Box<dyn Pending>>,
    first: bool,
) -> Result<(), StoreError> {
    let mut lost = None;
    if !jobs.is_empty() {
        let together = if first { together_first(tx, jobs) } else { together_in_savepoint(tx, jobs) };
        match together {
            Together::Succeeded => {}
            Together::RolledBack => {
                for job in jobs.iter_mut() {
                    job.run(tx, true);
                }
            }
            Together::Broken { error, transaction_lost } => {
                for job in jobs.iter_mut() {
                    job.fail(error.clone());
                }
                lost = transaction_lost.then_some(error);
            }
        }
    }
    held.extend(jobs.drain(..).map(|job| job.held()));
    lost.map_or(Ok(()), Err)
}

/// Runs the transaction's first jobs with no savepoint; if one fails, rolls
/// the transaction back and begins another.
fn together_first(tx: &WriteTx, jobs: &mut [Box<dyn Repeatable>]) -> Together {
    if jobs.iter_mut().all(|job| job.run(tx, false)) {
        return Together::Succeeded;
    }
    roll_back(tx);
    match begin(tx) {
        Ok(()) => Together::RolledBack,
        Err(error) => Together::Broken { error, transaction_lost: true },
    }
}

/// Runs jobs after others in the transaction under one savepoint.
fn together_in_savepoint(tx: &WriteTx, jobs: &mut [Box<dyn Repeatable>]) -> Together {
    let sql = |sql: &str| savepoint_sql(tx, sql).map_err(|e| StoreError::Unavailable(format!("{sql}: {e}")));
    if let Err(error) = sql("SAVEPOINT run") {
        return Together::Broken { error, transaction_lost: false };
    }
    tx.tally().savepoint();
    let all_ok = jobs.iter_mut().all(|job| job.run(tx, false)); // stops at the first failure
    let ended = if all_ok {
        sql("RELEASE run").map(|()| Together::Succeeded)
    } else {
        sql("ROLLBACK TO run").and_then(|()| sql("RELEASE run")).map(|()| Together::RolledBack)
    };
    match ended {
        Ok(Together::Succeeded) => tx.tally().release(),
        _ => tx.tally().roll_back(),
    }
    ended.unwrap_or_else(|error| Together::Broken { error, transaction_lost: false })
}

/// For tests: holds the writer thread with a job, so that writes queued
/// meanwhile run in its next batch, together, in the order they were queued.
#[cfg(test)]
pub(crate) mod held {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::mpsc as std_mpsc;

    use mcp_tasks_store::StoreError;

    use super::Writer;

    /// A write that has been sent (or is about to be) and not yet awaited.
    pub(crate) type Queued<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

    /// Polls `job` once, so it is queued behind the job holding the writer.
    pub(crate) async fn queue<F: Future + Unpin>(job: &mut F) {
        std::future::poll_fn(|cx| {
            assert!(Pin::new(&mut *job).poll(cx).is_pending(), "the writer is held");
            std::task::Poll::Ready(())
        })
        .await;
    }

    /// Holds `writer` with a job until the returned sender is used or dropped;
    /// the job's future, awaited after that, gives its result.
    pub(crate) async fn hold(writer: &Writer) -> (std_mpsc::Sender<()>, Queued<'_, Result<(), StoreError>>) {
        let (release, held) = std_mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel::<()>();
        let mut holder: Queued<'_, Result<(), StoreError>> = Box::pin(writer.write(move |_| {
            started.send(()).unwrap();
            let _ = held.recv();
            Ok(())
        }));
        queue(&mut holder).await;
        running.await.unwrap();
        (release, holder)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::held::{hold, queue};
    use super::*;

    fn writer() -> (tempfile::TempDir, Arc<Writer>, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("writer.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x INTEGER NOT NULL UNIQUE);").unwrap();
        let watch = Arc::new(FileWatch::new(&path).unwrap());
        (dir, Arc::new(Writer::start(conn, watch).unwrap()), path)
    }

    fn rows(path: &std::path::Path) -> Vec<i64> {
        let conn = Connection::open(path).unwrap();
        let mut s = conn.prepare("SELECT x FROM t ORDER BY x").unwrap();
        s.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    fn unavailable(e: rusqlite::Error) -> StoreError {
        StoreError::Unavailable(e.to_string())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_transaction_that_cannot_begin_again_after_a_failed_first_run_fails_the_whole_batch() {
        let (_dir, writer, path) = writer();
        let (release, holder) = hold(&writer).await;
        let mut kept = Box::pin(
            writer.write_repeatable(|conn| conn.execute("INSERT INTO t VALUES (1)", []).map(drop).map_err(unavailable)),
        );
        queue(&mut kept).await;
        // Fails after turning writes off, so the transaction begun again
        // after rolling the run back cannot begin.
        let mut breaks = Box::pin(writer.write_repeatable(|conn| {
            conn.pragma_update(None, "query_only", true).map_err(unavailable)?;
            Err::<(), _>(StoreError::Unavailable("refused".into()))
        }));
        queue(&mut breaks).await;
        let mut after =
            Box::pin(writer.write(|conn| conn.execute("INSERT INTO t VALUES (2)", []).map(drop).map_err(unavailable)));
        queue(&mut after).await;
        release.send(()).unwrap();
        holder.await.unwrap();
        for (name, result) in [("kept", kept.await), ("breaks", breaks.await), ("after", after.await)] {
            assert!(
                matches!(&result, Err(StoreError::Unavailable(m)) if m.contains("cannot begin a write transaction")),
                "{name}: {result:?}"
            );
        }
        assert_eq!(writer.stats().commits, 1, "only the holder's batch committed");
        assert!(rows(&path).is_empty(), "nothing of the lost batch was kept");
    }

    /// Queues repeatable jobs behind a job holding the writer, so they share
    /// one batch: job `k` inserts `10 k`, and a `fails` job then inserts a
    /// duplicate (a failure after a write). Returns each job's runs and result.
    async fn one_batch(fails: &[bool]) -> (Vec<usize>, Vec<Result<(), StoreError>>, Vec<i64>) {
        one_batch_after(None, fails).await
    }

    /// Like `one_batch`, after a job that runs once inserting `once` if given.
    async fn one_batch_after(once: Option<i64>, fails: &[bool]) -> (Vec<usize>, Vec<Result<(), StoreError>>, Vec<i64>) {
        let (_dir, writer, path) = writer();
        let (release, holder) = hold(&writer).await;
        let mut once_job = once.map(|x| {
            Box::pin(writer.write(move |conn| conn.execute("INSERT INTO t VALUES (?1)", [x]).map(drop).map_err(unavailable)))
        });
        if let Some(job) = once_job.as_mut() {
            queue(job).await;
        }
        let runs: Arc<Vec<AtomicUsize>> = Arc::new(fails.iter().map(|_| AtomicUsize::new(0)).collect());
        let mut jobs = Vec::new();
        for (k, &fail) in fails.iter().enumerate() {
            let runs = Arc::clone(&runs);
            let mut job = Box::pin(writer.write_repeatable(move |conn| {
                runs[k].fetch_add(1, Ordering::SeqCst);
                conn.execute("INSERT INTO t VALUES (?1)", [10 * k as i64]).map_err(unavailable)?;
                if fail {
                    conn.execute("INSERT INTO t VALUES (?1)", [10 * k as i64]).map_err(unavailable)?;
                }
                Ok(())
            }));
            queue(&mut job).await;
            jobs.push(job);
        }
        release.send(()).unwrap();
        holder.await.unwrap();
        if let Some(job) = once_job {
            job.await.unwrap();
        }
        let mut results = Vec::new();
        for job in jobs {
            results.push(job.await);
        }
        assert_eq!(writer.stats().commits, 2, "the holder's batch, then one batch of every job");
        let runs = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
        (runs, results, rows(&path))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn repeatable_jobs_that_all_succeed_run_once_together() {
        let (runs, results, rows) = one_batch(&[false, false, false]).await;
        assert_eq!(runs, vec![1, 1, 1]);
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        assert_eq!(rows, vec![0, 10, 20]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failure_in_a_run_after_a_job_that_runs_once_undoes_only_that_job() {
        // The run shares the transaction with a job that ran once (it cannot
        // run again): the run's savepoint, not the transaction, is rolled back.
        let (runs, results, rows) = one_batch_after(Some(5), &[false, true, false]).await;
        assert_eq!(runs, vec![2, 2, 1]);
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(results[1].is_err(), "{:?}", results[1]);
        assert_eq!(rows, vec![0, 5, 20], "the job run once kept its row, the failed job's insert was undone");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failure_after_a_write_undoes_only_that_job() {
        let (runs, results, rows) = one_batch(&[false, true, false, false]).await;
        // The first two ran together, the failure rolled the run back, and
        // every job ran again alone (the last two only then).
        assert_eq!(runs, vec![2, 2, 1, 1]);
        assert!(results[0].is_ok() && results[2].is_ok() && results[3].is_ok(), "{results:?}");
        assert!(matches!(&results[1], Err(StoreError::Unavailable(m)) if m.contains("UNIQUE")), "{:?}", results[1]);
        assert_eq!(rows, vec![0, 20, 30], "the failed job's first insert was undone, the others kept");
    }
}
