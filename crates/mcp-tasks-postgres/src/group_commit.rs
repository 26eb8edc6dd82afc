//! Group commit: concurrent writes of one kind (creations, or guarded
//! updates) share one transaction and one commit.
//!
//! Callers queue their job with a oneshot reply. One tokio task takes
//! everything queued (up to the batch's bound), runs it on one pooled
//! connection in one transaction, commits, and only then replies to each: a
//! write returns only after it is committed (`synchronous_commit` on:
//! durable). While a batch is in flight the next one gathers, so the busier
//! the store, the more jobs each round trip and commit carry.
//!
//! One job must not fail its neighbours. When PostgreSQL refuses a
//! statement of a batch (a value it will not store, a decoding failure),
//! the whole transaction is rolled back and nothing of it is kept, so the
//! batch is split in halves and each half runs again: the refused job ends
//! alone in its own transaction and gets the error; every other job is
//! committed and answered as if it had come by itself. Jobs run in the order
//! they were queued, halves included. A lost connection is not split: the
//! commit may have happened, so running a job again could answer it wrongly
//! (an update's guard would no longer match); every job of that batch gets
//! the error.

use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use deadpool_postgres::{Pool, Transaction};
use mcp_tasks_store::StoreError;
use tokio::sync::{mpsc, oneshot};

use crate::failure::Failure;
use crate::retry::retrying;

/// What a group commit's writer has committed since the store opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Transactions committed.
    pub commits: u64,
    /// Jobs (`create` calls, or `apply` calls) those commits answered; a
    /// job answered with a refusal counts too: it shared the round trip.
    pub jobs: u64,
}

/// Runs a batch of jobs in `tx` (not committing it): one output per job,
/// in order.
pub(crate) type RunBatch<J, O> =
    for<'a> fn(&'a Transaction<'a>, &'a [J]) -> Pin<Box<dyn Future<Output = Result<Vec<O>, Failure>> + Send + 'a>>;

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    jobs: AtomicU64,
}

struct Queued<J, O> {
    job: J,
    reply: oneshot::Sender<Result<O, StoreError>>,
}

/// The handle jobs of one kind go through.
pub(crate) struct GroupCommit<J, O> {
    queue: mpsc::UnboundedSender<Queued<J, O>>,
    counters: Arc<Counters>,
}

impl<J: Send + Sync + 'static, O: Send + 'static> GroupCommit<J, O> {
    /// Starts the writer task on the current tokio runtime: batches of at
    /// most `max_batch` jobs, each run by `run`. It ends when the handle is
    /// dropped, after its current batch.
    pub(crate) fn start(pool: Pool, max_batch: usize, run: RunBatch<J, O>) -> Self {
        let (queue, jobs) = mpsc::unbounded_channel();
        let counters = Arc::new(Counters::default());
        tokio::spawn(Writer { pool, run, counters: Arc::clone(&counters) }.serve(jobs, max_batch.max(1)));
        GroupCommit { queue, counters }
    }

    /// Commits and jobs so far.
    pub(crate) fn stats(&self) -> GroupCommitStats {
        GroupCommitStats {
            commits: self.counters.commits.load(Ordering::Relaxed),
            jobs: self.counters.jobs.load(Ordering::Relaxed),
        }
    }

    /// Runs `job` in the next batch; returns its output once that batch
    /// committed.
    pub(crate) async fn submit(&self, job: J) -> Result<O, StoreError> {
        let (reply, done) = oneshot::channel();
        self.queue.send(Queued { job, reply }).map_err(|_| StoreError::Closed)?;
        done.await.map_err(|_| StoreError::Closed)?
    }
}

struct Writer<J, O> {
    pool: Pool,
    run: RunBatch<J, O>,
    counters: Arc<Counters>,
}

impl<J: Send + Sync + 'static, O: Send + 'static> Writer<J, O> {
    async fn serve(self, mut queue: mpsc::UnboundedReceiver<Queued<J, O>>, max_batch: usize) {
        let mut batch = Vec::with_capacity(max_batch);
        while queue.recv_many(&mut batch, max_batch).await > 0 {
            let (jobs, replies): (Vec<J>, Vec<_>) = batch.drain(..).map(|q| (q.job, Some(q.reply))).unzip();
            self.answer(&jobs, replies).await;
        }
    }

    /// Commits `jobs`, splitting around refused ones, and replies to each
    /// as soon as its part is committed (or failed).
    async fn answer(&self, jobs: &[J], mut replies: Vec<Option<oneshot::Sender<Result<O, StoreError>>>>) {
        // A stack of parts still to run, the first part on top.
        let mut parts: Vec<Range<usize>> = Vec::with_capacity(8);
        parts.push(0..jobs.len());
        while let Some(part) = parts.pop() {
            let outcome = retrying(|| self.commit(&jobs[part.clone()])).await;
            let answers: Vec<Result<O, StoreError>> = match outcome {
                Ok(outputs) => {
                    self.counters.commits.fetch_add(1, Ordering::Relaxed);
                    outputs.into_iter().map(Ok).collect()
                }
                Err(failure) if failure.is_refusal() && part.len() > 1 => {
                    let middle = part.start + part.len() / 2;
                    parts.push(middle..part.end);
                    parts.push(part.start..middle);
                    continue;
                }
                Err(failure) => {
                    let error = failure.into_store();
                    tracing::warn!(error = %error, "a group commit of {} jobs failed", part.len());
                    part.clone().map(|_| Err(error.clone())).collect()
                }
            };
            self.counters.jobs.fetch_add(part.len() as u64, Ordering::Relaxed);
            for (i, answer) in part.zip(answers) {
                if let Some(reply) = replies[i].take() {
                    // The caller may have stopped waiting; what committed stays.
                    let _ = reply.send(answer);
                }
            }
        }
    }

    /// Runs `jobs` in one transaction and commits it.
    async fn commit(&self, jobs: &[J]) -> Result<Vec<O>, Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let outputs = (self.run)(&tx, jobs).await?;
        debug_assert_eq!(outputs.len(), jobs.len(), "one output per job");
        tx.commit().await?;
        Ok(outputs)
    }
}
