//! The process's open-file limit. Every connection is a file descriptor; the
//! usual soft limit of 1,024 is lower than the default connection limit, and
//! the hard limit is usually far higher, so the server raises soft to hard.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit where the system allows
/// it and returns the limit now in force (`None` where it cannot be read).
pub fn raise_open_file_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => Some(limit),
        Err(e) => {
            tracing::warn!(error = %e, "cannot raise the open-file limit");
            current_soft_limit()
        }
    }
}

#[cfg(unix)]
fn current_soft_limit() -> Option<u64> {
    rlimit::getrlimit(rlimit::Resource::NOFILE).ok().map(|(soft, _)| soft)
}

#[cfg(not(unix))]
fn current_soft_limit() -> Option<u64> {
    None
}
