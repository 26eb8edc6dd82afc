//! A SQLite VFS for read connections that maps each database file once per
//! process and keeps the mapping across commits.
//!
//! With `PRAGMA mmap_size`, SQLite's own unix VFS maps the database file
//! once per *connection*, and unmaps it at the connection's first read
//! after any other connection committed (a changed WAL resets the reader;
//! POSIX does not promise a mapping survives another process's writes).
//! A server whose writer commits often (poll instants up to once a second,
//! lease renewals) and whose pool holds several readers over a large file then
//! faults the same pages into every reader's mapping again after every
//! commit: at a million stored tasks most polls touch a page no reader's
//! mapping holds.
//!
//! This VFS is the default VFS (unix) with four methods of a main database
//! file opened read-only replaced (a file opened for writing, such as the
//! target of a `VACUUM INTO`, keeps the unix VFS's):
//!
//! - `xFetch` answers from one shared, read-only `MAP_SHARED` mapping of the
//!   file per process, made when the first connection opens the file and
//!   dropped when the last one closes it;
//! - `xUnfetch` keeps that mapping: on Linux a shared file mapping sees every
//!   `pwrite` at once (one page cache), so nothing in it goes stale, and the
//!   file only grows in WAL mode while a reader can see the pages (SQLite's
//!   checkpoint truncates the file only once no reader holds an older
//!   snapshot); a page beyond the file's known length, or beyond the
//!   mapping, is not fetched, and SQLite reads it with `xRead`;
//! - `xFileControl(SQLITE_FCNTL_MMAP_SIZE)` sets how much of the mapping the
//!   connection uses (its `PRAGMA mmap_size`) instead of making one of its
//!   own;
//! - `xClose` lets go of the mapping.
//!
//! Everything else — reads, locks, the WAL index — is the unix VFS's own.
//! Only open read connections with it ([`register`], then
//! `rusqlite::Connection::open_with_flags_and_vfs(path, flags, VFS_NAME)`)
//! on a database in WAL mode; a file opened for writing through it is the
//! unix VFS's, as if opened without it. Linux and other Unix systems whose shared file
//! mappings see `pwrite`s at once.

mod file_methods;
mod shared_file;
mod vfs;

pub use shared_file::{FileStats, MAP_BYTES, file_stats};
pub use vfs::{RegisterError, VFS_NAME, register};
