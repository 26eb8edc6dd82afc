//! The durable local handle book: one SQLite file remembering every task
//! handle this client was given, so a client that restarts can resume polling
//! the tasks it was waiting for (the specification's advice).
//!
//! Bearer tokens are never written here: a resumed client is given its
//! credentials again.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mcp_tasks_core::{Clock, SystemClock, TaskStatus, Timestamp};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::error::BookError;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS handles (
    server_url     TEXT    NOT NULL,
    task_id        TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    arguments      TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    last_status    TEXT    NOT NULL,
    status_message TEXT,
    updated_at     INTEGER NOT NULL,
    resolved_at    INTEGER,
    PRIMARY KEY (server_url, task_id)
);
CREATE INDEX IF NOT EXISTS handles_unfinished ON handles (resolved_at, created_at);
CREATE TABLE IF NOT EXISTS answered_inputs (
    server_url TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    input_key  TEXT NOT NULL,
    PRIMARY KEY (server_url, task_id, input_key)
);
";

/// How a handle left the book's set of unfinished handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// The task reached a terminal status (`completed`, `failed`, `cancelled`).
    Terminal(TaskStatus),
    /// The server no longer knows the id (expired, discarded, or never ours).
    Lost,
}

impl Resolution {
    fn as_str(self) -> &'static str {
        match self {
            Resolution::Terminal(status) => status.as_str(),
            Resolution::Lost => LOST,
        }
    }
}

/// The `last_status` a handle gets when the server no longer knows its id.
const LOST: &str = "lost";

/// One remembered task handle.
#[derive(Debug, Clone, PartialEq)]
pub struct HandleRecord {
    /// The MCP endpoint the task lives on.
    pub server_url: String,
    /// The server's task id.
    pub task_id: String,
    /// The tool that was called.
    pub tool: String,
    /// The arguments it was called with.
    pub arguments: Value,
    /// When this client received the handle (its own clock).
    pub created_at: Timestamp,
    /// The last status seen: a task status, or `lost`.
    pub last_status: String,
    /// The last status message seen, if any.
    pub status_message: Option<String>,
    /// When the record last changed.
    pub updated_at: Timestamp,
    /// When the handle resolved; `None` while it is unfinished.
    pub resolved_at: Option<Timestamp>,
}

impl HandleRecord {
    /// Whether the handle still owes this client an outcome.
    pub fn is_unfinished(&self) -> bool {
        self.resolved_at.is_none()
    }
}

/// The handle book. Cheap to clone; clones share one connection.
#[derive(Clone)]
pub struct HandleBook {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for HandleBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandleBook").field("path", &self.path).finish_non_exhaustive()
    }
}

/// The environment variable that names the book's file for `mcp-tasks call`.
pub const BOOK_ENV: &str = "MCP_TASKS_CLIENT_BOOK";

impl HandleBook {
    /// Where the book lives by default: `mcp-tasks/client.db` in the platform's
    /// data directory (e.g. `~/.local/share` on Linux), or
    /// `./mcp-tasks-client.db` where the platform has none.
    pub fn default_path() -> PathBuf {
        dirs::data_dir()
            .map(|d| d.join("mcp-tasks").join("client.db"))
            .unwrap_or_else(|| PathBuf::from("mcp-tasks-client.db"))
    }

    /// Opens (creating if needed) the book at `path`, stamping with the system clock.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, BookError> {
        Self::open_with_clock(path, Arc::new(SystemClock))
    }

    /// Opens the book at `path`, stamping records with `clock`.
    pub fn open_with_clock(path: impl AsRef<Path>, clock: Arc<dyn Clock>) -> Result<Self, BookError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| BookError::Directory { path: dir.to_path_buf(), source })?;
        }
        let sql = |source| BookError::Sqlite { path: path.clone(), source };
        let conn = Connection::open(&path).map_err(sql)?;
        // WAL lets a second `mcp-tasks call` read while another writes; the
        // busy timeout makes concurrent writers wait instead of failing.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(HandleBook { conn: Arc::new(Mutex::new(conn)), path, clock })
    }

    /// The file this book lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn with_conn<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, BookError> {
        // A poisoned lock only means another thread panicked mid-call; SQLite
        // itself kept the file consistent, so carry on with the connection.
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn).map_err(|source| BookError::Sqlite { path: self.path.clone(), source })
    }

    /// Records a handle the moment it arrives. Recording the same handle
    /// again keeps the first record (its `created_at` and arguments).
    pub fn record(
        &self,
        server_url: &str,
        task_id: &str,
        tool: &str,
        arguments: &Value,
        status: TaskStatus,
        status_message: Option<&str>,
    ) -> Result<(), BookError> {
        let now = self.clock.now().as_millis();
        let args = arguments.to_string();
        self.with_conn(|c| {
            c.execute(
                "INSERT INTO handles (server_url, task_id, tool, arguments, created_at, last_status,
                                      status_message, updated_at, resolved_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?5, NULL)
                 ON CONFLICT (server_url, task_id) DO NOTHING",
                params![server_url, task_id, tool, args, now, status.as_str(), status_message],
            )
            .map(drop)
        })
    }

    /// Notes the latest status of an unfinished handle (a resolved one is left alone).
    pub fn update_status(
        &self,
        server_url: &str,
        task_id: &str,
        status: TaskStatus,
        status_message: Option<&str>,
    ) -> Result<(), BookError> {
        let now = self.clock.now().as_millis();
        self.with_conn(|c| {
            c.execute(
                "UPDATE handles SET last_status = ?3, status_message = ?4, updated_at = ?5
                 WHERE server_url = ?1 AND task_id = ?2 AND resolved_at IS NULL",
                params![server_url, task_id, status.as_str(), status_message, now],
            )
            .map(drop)
        })
    }

    /// Marks a handle resolved, so [`HandleBook::unfinished`] stops listing it.
    /// Returns whether this call resolved it (false: unknown or already resolved).
    pub fn resolve(&self, server_url: &str, task_id: &str, how: Resolution) -> Result<bool, BookError> {
        let now = self.clock.now().as_millis();
        let changed = self.with_conn(|c| {
            c.execute(
                "UPDATE handles SET last_status = ?3, updated_at = ?4, resolved_at = ?4
                 WHERE server_url = ?1 AND task_id = ?2 AND resolved_at IS NULL",
                params![server_url, task_id, how.as_str(), now],
            )
        })?;
        Ok(changed == 1)
    }

    /// Remembers that the server acknowledged an answer to `key`, so a
    /// restarted client does not ask the user again.
    pub fn record_answered(&self, server_url: &str, task_id: &str, keys: &[String]) -> Result<(), BookError> {
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(
                "INSERT INTO answered_inputs (server_url, task_id, input_key) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING",
            )?;
            for key in keys {
                stmt.execute(params![server_url, task_id, key])?;
            }
            Ok(())
        })
    }

    /// The input keys already answered for a task.
    pub fn answered(&self, server_url: &str, task_id: &str) -> Result<Vec<String>, BookError> {
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT input_key FROM answered_inputs WHERE server_url = ?1 AND task_id = ?2 ORDER BY input_key",
            )?;
            let rows = stmt.query_map(params![server_url, task_id], |r| r.get::<_, String>(0))?;
            rows.collect()
        })
    }

    /// One handle, resolved or not.
    pub fn get(&self, server_url: &str, task_id: &str) -> Result<Option<HandleRecord>, BookError> {
        let row = self.with_conn(|c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM handles WHERE server_url = ?1 AND task_id = ?2"),
                params![server_url, task_id],
                RawRecord::from_row,
            )
            .optional()
        })?;
        row.map(|r| r.into_record(&self.path)).transpose()
    }

    /// Every unfinished handle, oldest first; only those on `server_url` when given.
    /// This is what a restarted client resumes.
    pub fn unfinished(&self, server_url: Option<&str>) -> Result<Vec<HandleRecord>, BookError> {
        let rows = self.with_conn(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM handles
                 WHERE resolved_at IS NULL AND (?1 IS NULL OR server_url = ?1)
                 ORDER BY created_at, task_id"
            ))?;
            let rows = stmt.query_map(params![server_url], RawRecord::from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        rows.into_iter().map(|r| r.into_record(&self.path)).collect()
    }
}

const COLUMNS: &str =
    "server_url, task_id, tool, arguments, created_at, last_status, status_message, updated_at, resolved_at";

/// A row before its JSON column is parsed.
struct RawRecord {
    server_url: String,
    task_id: String,
    tool: String,
    arguments: String,
    created_at: i64,
    last_status: String,
    status_message: Option<String>,
    updated_at: i64,
    resolved_at: Option<i64>,
}

impl RawRecord {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(RawRecord {
            server_url: r.get(0)?,
            task_id: r.get(1)?,
            tool: r.get(2)?,
            arguments: r.get(3)?,
            created_at: r.get(4)?,
            last_status: r.get(5)?,
            status_message: r.get(6)?,
            updated_at: r.get(7)?,
            resolved_at: r.get(8)?,
        })
    }

    fn into_record(self, path: &Path) -> Result<HandleRecord, BookError> {
        let arguments = serde_json::from_str(&self.arguments).map_err(|source| BookError::CorruptArguments {
            path: path.to_path_buf(),
            task_id: self.task_id.clone(),
            source,
        })?;
        Ok(HandleRecord {
            server_url: self.server_url,
            task_id: self.task_id,
            tool: self.tool,
            arguments,
            created_at: Timestamp(self.created_at),
            last_status: self.last_status,
            status_message: self.status_message,
            updated_at: Timestamp(self.updated_at),
            resolved_at: self.resolved_at.map(Timestamp),
        })
    }
}
