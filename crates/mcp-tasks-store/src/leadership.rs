//! [`Leadership`]: which of the processes sharing a store runs its
//! maintenance (the reaper and lapsed-lease triage).
//!
//! Maintenance is safe to run twice (every sweep is a guarded
//! compare-and-set), but it is wasted work and contention when every
//! instance of a fleet does it, so one leader at a time does. A store
//! that only one process can use ([`SoleLeader`]) makes that process the
//! leader for good.

use std::fmt::Debug;

use async_trait::async_trait;
use mcp_tasks_core::Timestamp;

use crate::error::StoreError;

/// An election among the processes sharing a store, by leases: a
/// candidate holds leadership until the instant it asked for, and must
/// campaign again before then to keep it. Instants come from the clock all
/// candidates share (the database's, on a shared store).
#[async_trait]
pub trait Leadership: Send + Sync + Debug {
    /// Becomes, or stays, the leader until `until`, if no other candidate
    /// holds a term that has not lapsed at `now`. Returns whether
    /// `candidate` leads now. One guarded write: two candidates
    /// campaigning at once never both win a term.
    async fn campaign(&self, candidate: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError>;

    /// Ends `candidate`'s term at once, if it holds one, so another takes
    /// over without waiting for it to lapse (a graceful shutdown).
    async fn resign(&self, candidate: &str) -> Result<(), StoreError>;

    /// Whether every candidate always leads (no other process can share
    /// the store): terms then never lapse, whatever the clock does.
    fn always_leads(&self) -> bool {
        false
    }
}

/// Leadership of a store only one process uses (SQLite, memory): that
/// process always leads.
#[derive(Debug, Clone, Copy, Default)]
pub struct SoleLeader;

#[async_trait]
impl Leadership for SoleLeader {
    async fn campaign(&self, _candidate: &str, _now: Timestamp, _until: Timestamp) -> Result<bool, StoreError> {
        Ok(true)
    }

    async fn resign(&self, _candidate: &str) -> Result<(), StoreError> {
        Ok(())
    }

    fn always_leads(&self) -> bool {
        true
    }
}
