//! The PostgreSQL task store: [`PostgresStore`], for many server instances
//! on one database.
//!
//! - Durable: `create` returns only after its row is committed
//!   (`synchronous_commit` stays on); concurrent creations share one
//!   transaction and one commit, and so do concurrent guarded updates
//!   (pipelined on their connection); a value PostgreSQL refuses fails only
//!   the call that carried it.
//! - Safe under concurrency: claims use `FOR UPDATE SKIP LOCKED`, and every
//!   change is a guarded compare-and-set in one `UPDATE`.
//! - Cheap maintenance: one partial index per sweep and per claim, so each
//!   costs in proportion to the rows it touches.
//! - Safe to point at the wrong place: a schema holding another
//!   application's tables is refused with
//!   [`StoreError::NotOurs`](mcp_tasks_store::StoreError::NotOurs), never
//!   modified; versioned migrations run at open.
//!
//! SQL lives with its operation: `create.rs`, `claim.rs`, `apply.rs`,
//! `polls.rs`, `reads.rs`, `dead_letters.rs`; the schema in `schema.rs`;
//! the shared writer of creations and of updates in `group_commit.rs`.
//!
//! The `testing` feature adds `testing::TestDatabase`, a throw-away schema
//! per test, and `testing::CutProxy`, a proxy a test cuts to take the
//! database away, for tests of this crate and of its users (enable it in
//! dev-dependencies).

mod apply;
mod claim;
mod clock;
mod create;
#[cfg(any(test, feature = "testing"))]
mod cut_proxy;
mod dead_letters;
mod failure;
mod group_commit;
mod leader;
mod listener;
mod open;
mod options;
mod polls;
#[cfg(test)]
mod query_plans;
mod reads;
mod retry;
mod row;
mod schema;
mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod url;

pub use clock::{DEFAULT_CLOCK_REFRESH, DatabaseClock};
pub use group_commit::GroupCommitStats;
pub use options::PostgresOptions;
pub use store::PostgresStore;

/// `url` without its password, as messages and logs may show it.
pub fn redact_url(url: &str) -> String {
    url::redact(url)
}
