//! Noticing that the database file was deleted or replaced under a running
//! store.
//!
//! An open SQLite connection keeps writing to the file it opened, even after
//! that file was unlinked or another file was renamed over its path: every
//! write would be acknowledged into a file nobody will ever open again, and
//! a restart would find none of them. So the store remembers the (device,
//! inode) its path named when it opened, and before each write batch (one
//! `stat`, about a microsecond) checks the path still names that file. Once
//! it does not, the store refuses writes and reports unhealthy for good: the
//! open file is gone, only a restart reopens the path.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mcp_tasks_store::StoreError;

/// A file's identity on its file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
}

#[cfg(unix)]
fn identity_of(path: &Path) -> std::io::Result<Option<Identity>> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)?;
    Ok(Some(Identity { device: meta.dev(), inode: meta.ino() }))
}

#[cfg(not(unix))]
fn identity_of(path: &Path) -> std::io::Result<Option<Identity>> {
    // No portable inode: only a deleted path is noticed.
    std::fs::metadata(path).map(|_| None)
}

/// The identity of the open database file, and whether it was lost.
#[derive(Debug)]
pub(crate) struct FileWatch {
    path: PathBuf,
    opened: Option<Identity>,
    lost: OnceLock<StoreError>,
}

impl FileWatch {
    /// Remembers the file `path` names now (call right after opening it).
    pub(crate) fn new(path: &Path) -> Result<Self, StoreError> {
        let opened = identity_of(path).map_err(|e| StoreError::Open {
            path: path.display().to_string(),
            reason: format!("cannot stat the opened file: {e}"),
        })?;
        Ok(FileWatch { path: path.to_path_buf(), opened, lost: OnceLock::new() })
    }

    /// `Ok` while the path still names the open file; otherwise the
    /// `Unavailable` error every write and health check returns from then
    /// on (logged once, when first noticed).
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        if let Some(lost) = self.lost.get() {
            return Err(lost.clone());
        }
        let what = match identity_of(&self.path) {
            Ok(now) if now == self.opened => return Ok(()),
            Ok(_) => "replaced by another file",
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "deleted",
            // Cannot tell (a permission change, an I/O error): not proof the
            // file is gone, so let SQLite's own errors speak.
            Err(_) => return Ok(()),
        };
        let error = StoreError::Unavailable(format!(
            "the task database {} was {what} while the server ran; further writes are refused \
             so none is acknowledged into a file that is gone. Restart the server to open {} again \
             (restore the file first to keep what it held)",
            self.path.display(),
            self.path.display()
        ));
        let first = self.lost.set(error.clone()).is_ok();
        if first {
            tracing::error!(path = %self.path.display(), "{error}");
        }
        Err(self.lost.get().cloned().unwrap_or(error))
    }
}
