//! [`SqliteStore`]: the [`TaskStore`] on one SQLite file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use mcp_tasks_core::{Clock, SystemClock, TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::{
    AttemptRecord, ClaimParams, Created, DeadLetter, DeadLetterQuery, GuardedUpdate, ListQuery, NewTask, PurgeQuery,
    StoreError, SweepQuery, TaskRead, TaskStore, UpdateOutcome,
};

use crate::file_watch::FileWatch;
use crate::open::open_writer;
use crate::options::SqliteOptions;
use crate::quarantine::{delete_expired, quarantine_all};
use crate::readers::Readers;
use crate::serve_lock::ServeLock;
use crate::writer::{WriteStats, Writer};
use crate::{reads, writes};

/// The embedded, durable task store: one SQLite file in WAL mode with
/// `synchronous = FULL`, written by one group-committing thread and read
/// through a pool of read-only connections.
///
/// Dropping the store finishes the writer's current batch and closes the
/// file (blocking until then, at most the busy timeout if another process
/// holds the lock).
pub struct SqliteStore {
    path: PathBuf,
    /// The writer thread (crate-visible so tests can hold it and queue
    /// writes into one batch).
    pub(crate) writer: Writer,
    readers: Arc<Readers>,
    watch: Arc<FileWatch>,
    /// Declared last so it is released after the writer has closed the file.
    _serve_lock: Option<ServeLock>,
}

impl SqliteStore {
    /// Opens the database at `path`, creating and migrating it if needed.
    ///
    /// Fails with [`StoreError::Open`] when the path cannot be opened (a
    /// directory, a missing parent directory, no permission), and with
    /// [`StoreError::NotOurs`] for a file that is not SQLite, an SQLite
    /// database of another application, or an mcp-tasks schema newer than
    /// this build; with [`SqliteOptions::serve_lock`], with
    /// [`StoreError::InUse`] while another serving store has the file open.
    /// Blocks briefly (file I/O); call it at startup.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// [`open`](SqliteStore::open) with explicit options.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        // Before anything touches the file: a refused server changes nothing.
        let serve_lock = match options.serve_lock {
            true => Some(ServeLock::acquire(&path)?),
            false => None,
        };
        let conn = open_writer(&path, options.busy_timeout)?;
        let watch = Arc::new(FileWatch::new(&path)?);
        let writer = Writer::start(conn, Arc::clone(&watch))?;
        Ok(SqliteStore {
            watch,
            readers: Readers::new(path.clone(), options.busy_timeout, options.read_connections),
            path,
            writer,
            _serve_lock: serve_lock,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Copies the write-ahead log into the database file and empties it,
    /// after every write queued before this call has committed: the `.db`
    /// file alone then holds every task. Call it at shutdown, once the
    /// runtime has stopped writing (closing the store does it too, but a
    /// serving process may exit before the last handle to the store drops).
    /// Fails if the file was deleted or replaced, or a reader kept the
    /// checkpoint from finishing.
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        self.writer.checkpoint().await
    }

    /// Writes a consistent copy of the whole database to a new file at
    /// `dest` (SQLite's `VACUUM INTO`, from one read snapshot): a safe
    /// backup of a live database, taken beside a running server without
    /// stopping it or blocking its writes. Fails if `dest` already exists.
    pub async fn backup_to(&self, dest: impl AsRef<Path>) -> Result<(), StoreError> {
        let dest = dest.as_ref().to_path_buf();
        if dest.exists() {
            return Err(StoreError::Open {
                path: dest.display().to_string(),
                reason: "the backup destination already exists; choose a new file".into(),
            });
        }
        self.readers.read(move |conn| reads::backup_to(conn, &dest)).await
    }

    /// Commits and writes since the store opened: `writes / commits` is the
    /// average group-commit batch.
    pub fn write_stats(&self) -> WriteStats {
        self.writer.stats()
    }
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish_non_exhaustive()
    }
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        // Repeatable: its outcome depends only on the database (and `new`).
        self.writer.write_repeatable(move |conn| writes::create(conn, new.clone())).await
    }

    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        let id = id.clone();
        self.readers.read_point(move |conn| reads::get(conn, &id)).await
    }

    async fn get_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        let id = id.clone();
        let principal = principal.map(str::to_owned);
        self.readers.read_point(move |conn| reads::get_visible(conn, &id, principal.as_deref())).await
    }

    async fn get_visible_for_answer(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRead>, StoreError> {
        let id = id.clone();
        let principal = principal.map(str::to_owned);
        self.readers.read_point(move |conn| reads::get_visible_for_answer(conn, &id, principal.as_deref())).await
    }

    async fn health(&self) -> Result<(), StoreError> {
        self.watch.check()
    }

    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        if polls.is_empty() {
            return Ok(());
        }
        let polls = polls.to_vec();
        self.writer.write_repeatable(move |conn| writes::record_polls(conn, &polls)).await
    }

    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        // Repeatable, like every write here whose outcome depends only on
        // the database and its arguments: a run of them shares one savepoint.
        self.writer.write_repeatable(move |conn| writes::claim(conn, params.clone())).await
    }

    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        if updates.is_empty() {
            return Ok(Vec::new());
        }
        self.writer.write_repeatable(move |conn| updates.iter().map(|u| writes::apply(conn, u, true)).collect()).await
    }

    async fn apply_unread(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        if updates.is_empty() {
            return Ok(Vec::new());
        }
        self.writer.write_repeatable(move |conn| updates.iter().map(|u| writes::apply(conn, u, false)).collect()).await
    }

    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        let id = id.clone();
        self.readers.read(move |conn| reads::attempts(conn, &id)).await
    }

    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        let now = quarantine_instant(&query);
        let expiry = matches!(query, SweepQuery::Expired { .. });
        let (good, unreadable) = self.readers.read(move |conn| reads::sweep_candidates(conn, query)).await?;
        if !unreadable.is_empty() {
            // Set the unreadable rows aside so they stop coming back, but
            // hand out the rest even if that write fails.
            let quarantined = self
                .writer
                .write(move |conn| {
                    if expiry {
                        delete_expired(conn, &unreadable, now).map(drop)
                    } else {
                        quarantine_all(conn, &unreadable, now)
                    }
                })
                .await;
            if let Err(e) = quarantined {
                tracing::error!(error = %e, "cannot fail the unreadable tasks a sweep found");
            }
        }
        Ok(good)
    }

    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.readers.read(move |conn| reads::list(conn, query)).await
    }

    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        self.readers.read(reads::count_by_status).await
    }

    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        self.readers.read(reads::count_by_status_and_tool).await
    }

    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        let tool = tool.to_owned();
        self.readers.read(move |conn| reads::recent_durations(conn, &tool, limit)).await
    }

    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        self.readers.read(move |conn| reads::list_dead_letters(conn, query)).await
    }

    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        let task = task.clone();
        self.readers.read(move |conn| reads::get_dead_letter(conn, &task)).await
    }

    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        let task = task.clone();
        self.writer.write(move |conn| writes::requeue_dead_letter(conn, &task, new)).await
    }

    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError> {
        self.writer.write(move |conn| writes::purge_dead_letters(conn, query)).await
    }
}

/// When an unreadable row a sweep found is failed: the sweep's own "now" when
/// it has one, else the system clock (stores otherwise take every instant
/// from their caller; this is the one write no caller asked for).
fn quarantine_instant(query: &SweepQuery) -> Timestamp {
    match query {
        SweepQuery::PastDeadline { now, .. } | SweepQuery::Expired { now, .. } => *now,
        SweepQuery::Unseen { .. } | SweepQuery::Leased { .. } => SystemClock.now(),
    }
}
