//! The maintenance leader: of the runtimes sharing a store, one at a time
//! runs the reaper and lapsed-lease triage.
//!
//! Leadership is a term won through the store's
//! [`Leadership`](mcp_tasks_store::Leadership) (a lease row on PostgreSQL;
//! always this process on SQLite and memory) and renewed every third of
//! the leader lease. A runtime leads while its clock is before the end of
//! the term it last won, so a leader cut off from the store stops sweeping
//! when its term lapses, and another wins the next term at its next
//! campaign: the work is taken over within `lease + lease / 3` of the
//! leader's last renewal. Two leaders at once (a stalled one waking up)
//! could not corrupt anything: every sweep is a guarded compare-and-set.
//!
//! The reaper's and lapsed-lease triage's loops ask [`Leader::gate`] before
//! each pass; the campaign is a pass of its own ([`Leader::spawn`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use mcp_tasks_core::{Clock, Timestamp};
use mcp_tasks_store::Leadership;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::maintenance::{self, Gate, Schedule};

/// Default length of the leader's term: how long maintenance may go
/// undone after the leader dies, before another instance takes over (plus
/// a third of it, the campaign period).
pub const DEFAULT_LEADER_LEASE: Duration = Duration::from_secs(15);

/// One runtime's standing in the election.
pub(crate) struct Leader {
    leadership: Arc<dyn Leadership>,
    clock: Arc<dyn Clock>,
    /// Who campaigns: the runtime's executor id.
    owner: String,
    lease: Duration,
    /// End of the term this runtime last won (ms); `i64::MIN` if none.
    until: AtomicI64,
    /// Whether it led at the last look: only to log changes once.
    leading: AtomicBool,
}

impl std::fmt::Debug for Leader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leader").field("owner", &self.owner).field("lease", &self.lease).finish_non_exhaustive()
    }
}

impl Leader {
    pub(crate) fn new(leadership: Arc<dyn Leadership>, clock: Arc<dyn Clock>, owner: String, lease: Duration) -> Self {
        Leader { leadership, clock, owner, lease, until: AtomicI64::new(i64::MIN), leading: AtomicBool::new(false) }
    }

    /// Whether this runtime leads now; logs a lapsed term once.
    pub(crate) fn leads(&self) -> bool {
        self.leads_at(self.clock.now())
    }

    fn leads_at(&self, now: Timestamp) -> bool {
        if self.leadership.always_leads() {
            // The only process on its store: a clock jump (a manual clock,
            // a suspended machine) must not pause its maintenance.
            return true;
        }
        let leads = now.as_millis() < self.until.load(Ordering::SeqCst);
        if !leads && self.leading.swap(false, Ordering::SeqCst) {
            tracing::info!("maintenance leadership lost: the term lapsed before it could be renewed");
        }
        leads
    }

    /// The gate of a pass only the leader runs.
    pub(crate) fn gate(self: &Arc<Self>) -> Gate {
        let leader = self.clone();
        Gate::when(move || leader.leads())
    }

    fn gained(&self, until: Timestamp) {
        self.until.store(until.as_millis(), Ordering::SeqCst);
        // A process alone on its store leads from its start to its end: nothing to tell.
        if !self.leading.swap(true, Ordering::SeqCst) && !self.leadership.always_leads() {
            tracing::info!("maintenance leadership gained: this instance now runs the reaper and lapsed-lease triage");
        }
    }

    fn refused(&self) {
        self.until.store(i64::MIN, Ordering::SeqCst);
        if self.leading.swap(false, Ordering::SeqCst) {
            tracing::info!("maintenance leadership lost: another instance leads");
        }
    }

    /// Campaigns once: wins, keeps or loses the term. A store error keeps
    /// the current term until it lapses.
    pub(crate) async fn campaign_once(&self) -> bool {
        let now = self.clock.now();
        let until = now.plus(self.lease);
        match self.leadership.campaign(&self.owner, now, until).await {
            Ok(true) => {
                self.gained(until);
                true
            }
            Ok(false) => {
                self.refused();
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot campaign for maintenance leadership");
                self.leads_at(now)
            }
        }
    }

    /// Campaigns at once, then every third of the lease, until `stop`.
    pub(crate) fn spawn(self: &Arc<Self>, stop: CancellationToken) -> JoinHandle<()> {
        let schedule = Schedule { eager: true, ..Schedule::every(self.lease / 3) };
        let leader = self.clone();
        maintenance::spawn_pass("leader campaign", schedule, stop, move || {
            let leader = leader.clone();
            async move {
                leader.campaign_once().await;
                Ok(())
            }
        })
    }

    /// Ends this runtime's term at shutdown, so another takes over at once.
    pub(crate) async fn resign(&self) {
        if !self.leading.swap(false, Ordering::SeqCst) {
            return;
        }
        self.until.store(i64::MIN, Ordering::SeqCst);
        match self.leadership.resign(&self.owner).await {
            Ok(()) if self.leadership.always_leads() => {}
            Ok(()) => tracing::info!("maintenance leadership handed back at shutdown"),
            Err(e) => tracing::warn!(error = %e, "cannot hand back maintenance leadership; it lapses by itself"),
        }
    }
}
