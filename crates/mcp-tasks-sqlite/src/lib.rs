//! The embedded default task store: [`SqliteStore`], one SQLite file.
//!
//! - Durable: WAL journal with `synchronous = FULL`; `create` returns only
//!   after the commit holding its row is fsynced.
//! - Fast under concurrency: one writer thread group-commits every queued
//!   write in one transaction (one fsync for many creations); reads use a
//!   pool of read-only connections and never wait behind a commit.
//! - Cheap maintenance: one partial index per sweep and per claim, so each
//!   costs in proportion to the rows it touches.
//! - Safe to point at the wrong file: a file that is not ours is refused
//!   with [`StoreError::NotOurs`](mcp_tasks_store::StoreError::NotOurs), never
//!   modified.

#[cfg(test)]
mod count_tally;
mod counts;
mod file_watch;
mod open;
mod options;
#[cfg(test)]
mod plan_stability;
mod quarantine;
#[cfg(test)]
mod query_plans;
#[cfg(test)]
mod reader_mmap;
mod readers;
mod reads;
#[cfg(test)]
mod repeatable_writes;
mod row;
mod row_key;
#[cfg(test)]
mod rowid_probe;
mod schema;
mod serve_lock;
mod store;
#[cfg(test)]
mod sub_journal;
mod tally;
mod update_sql;
mod write_tx;
mod writer;
mod writes;

pub use options::{DEFAULT_BUSY_TIMEOUT, SqliteOptions, default_read_connections};
pub use store::SqliteStore;
pub use writer::WriteStats;
