//! Group commit of creations: concurrent `create` calls share one
//! transaction, one multi-row insert and one commit.
//!
//! Callers queue their task with a oneshot reply. One tokio task takes
//! everything queued (up to [`MAX_BATCH`]), inserts it on one pooled
//! connection in one transaction, commits, and only then replies to each: a
//! `create` returns only after its row is committed (`synchronous_commit`
//! on: durable). While a batch is in flight the next one gathers, so the
//! busier the store, the more creations each round trip and commit carry.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use deadpool_postgres::Pool;
use mcp_tasks_store::{Created, NewTask, StoreError};
use tokio::sync::{mpsc, oneshot};

use crate::create::create_all;
use crate::failure::Failure;
use crate::retry::retrying;

/// Most creations one transaction carries, so one commit's latency stays
/// bounded.
pub(crate) const MAX_BATCH: usize = 512;

/// What the creation batcher has committed since the store opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CreateStats {
    /// Transactions committed.
    pub commits: u64,
    /// `create` calls those commits answered (a returned existing task or a
    /// refused one counts too: it shared the round trip).
    pub creates: u64,
}

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    creates: AtomicU64,
}

struct Job {
    new: NewTask,
    reply: oneshot::Sender<Result<Created, StoreError>>,
}

/// The handle `create` calls go through.
pub(crate) struct Batcher {
    jobs: mpsc::UnboundedSender<Job>,
    counters: Arc<Counters>,
}

impl Batcher {
    /// Starts the batcher task on the current tokio runtime. It ends when
    /// the batcher is dropped, after its current batch.
    pub(crate) fn start(pool: Pool) -> Self {
        let (jobs, queue) = mpsc::unbounded_channel();
        let counters = Arc::new(Counters::default());
        tokio::spawn(run(pool, queue, Arc::clone(&counters)));
        Batcher { jobs, counters }
    }

    /// Commits and creations so far.
    pub(crate) fn stats(&self) -> CreateStats {
        CreateStats {
            commits: self.counters.commits.load(Ordering::Relaxed),
            creates: self.counters.creates.load(Ordering::Relaxed),
        }
    }

    /// Creates `new` in the next batch; returns once that batch committed.
    pub(crate) async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        let (reply, done) = oneshot::channel();
        self.jobs.send(Job { new, reply }).map_err(|_| StoreError::Closed)?;
        done.await.map_err(|_| StoreError::Closed)?
    }
}

async fn run(pool: Pool, mut queue: mpsc::UnboundedReceiver<Job>, counters: Arc<Counters>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (news, replies): (Vec<NewTask>, Vec<_>) = batch.drain(..).map(|j| (j.new, j.reply)).unzip();
        match retrying(|| commit_batch(&pool, &news)).await {
            Ok(results) => {
                counters.commits.fetch_add(1, Ordering::Relaxed);
                counters.creates.fetch_add(results.len() as u64, Ordering::Relaxed);
                for (reply, result) in replies.into_iter().zip(results) {
                    // The caller may have stopped waiting; its row is committed anyway.
                    let _ = reply.send(result);
                }
            }
            Err(failure) => {
                let error = failure.into_store();
                tracing::warn!(error = %error, "creation batch of {} failed", news.len());
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
            }
        }
    }
}

/// Inserts one batch in one transaction and commits it.
async fn commit_batch(pool: &Pool, news: &[NewTask]) -> Result<Vec<Result<Created, StoreError>>, Failure> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let results = create_all(&tx, news).await?;
    tx.commit().await?;
    Ok(results)
}
