//! The serving lock: one server per database file.
//!
//! The SQLite store is single-node by design: at start a server's triage
//! takes every lease, because any other owner must be a dead process. A
//! second server on the same file would take over the first one's running
//! tasks, so a serving store holds an exclusive OS advisory lock for as long
//! as it is open, and a second one is refused at once.
//!
//! The lock is taken on a sidecar file (`<db>.lock`, holding the server's
//! pid), not the database: SQLite's own POSIX locks on the database file
//! would be released by closing any other descriptor of it, and SQLite's
//! `locking_mode = EXCLUSIVE` would also lock out the operator commands
//! (`tasks`, `dlq`), which open the store without this lock. The OS releases
//! the lock when the process dies, however it dies; the file is left behind
//! on purpose (removing it would race a server starting).

use std::ffi::OsString;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use mcp_tasks_store::StoreError;

/// The lock file of the database at `db`: `<db>.lock`.
pub(crate) fn lock_path(db: &Path) -> PathBuf {
    let mut name = OsString::from(db.as_os_str());
    name.push(".lock");
    PathBuf::from(name)
}

/// The serving lock on one database, held until dropped.
#[derive(Debug)]
pub(crate) struct ServeLock {
    /// Open for the life of the lock: closing it releases the lock.
    _file: File,
}

impl ServeLock {
    /// Takes the serving lock of `db`, or fails with
    /// [`StoreError::InUse`] naming the process that holds it.
    pub(crate) fn acquire(db: &Path) -> Result<Self, StoreError> {
        let path = lock_path(db);
        let open_error = |reason: String| StoreError::Open { path: db.display().to_string(), reason };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| open_error(format!("cannot open its lock file {}: {e}", path.display())))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::InUse {
                    path: db.display().to_string(),
                    lock: path.display().to_string(),
                    holder: holder_pid(&mut file),
                });
            }
            Err(TryLockError::Error(e)) => {
                return Err(open_error(format!("cannot lock {}: {e}", path.display())));
            }
        }
        // Ours now: say who holds it, for the next one to report.
        let write_pid = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.rewind()?;
            writeln!(file, "{}", std::process::id())
        };
        if let Err(e) = write_pid(&mut file) {
            // The lock holds without the pid; a refused server just cannot name us.
            tracing::warn!(lock = %path.display(), error = %e, "cannot write this server's pid into its lock file");
        }
        Ok(ServeLock { _file: file })
    }
}

/// The pid the lock's holder wrote, if it wrote one.
fn holder_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
