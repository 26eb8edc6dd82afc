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

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use mcp_tasks_core::Timestamp;
use mcp_tasks_store::Leadership;
use tokio::task::JoinHandle;

use crate::error::RuntimeError;
use crate::reaper::{self, ReapReport};
use crate::runtime::Runtime;
use crate::shared::Shared;
use crate::triage::{self, TriageReport, TriageScope};

/// Default length of the leader's term: how long maintenance may go
/// undone after the leader dies, before another instance takes over (plus
/// a third of it, the campaign period).
pub const DEFAULT_LEADER_LEASE: Duration = Duration::from_secs(15);

/// One runtime's standing in the election.
#[derive(Debug)]
pub(crate) struct Leader {
    leadership: Arc<dyn Leadership>,
    lease: Duration,
    /// End of the term this runtime last won (ms); `i64::MIN` if none.
    until: AtomicI64,
    /// Whether it led at the last look: only to log changes once.
    leading: AtomicBool,
}

impl Leader {
    pub(crate) fn new(leadership: Arc<dyn Leadership>, lease: Duration) -> Self {
        Leader { leadership, lease, until: AtomicI64::new(i64::MIN), leading: AtomicBool::new(false) }
    }

    /// Whether this runtime leads at `now`; logs a lapsed term once.
    fn leads(&self, now: Timestamp) -> bool {
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

    fn gained(&self, until: Timestamp) {
        self.until.store(until.as_millis(), Ordering::SeqCst);
        if !self.leading.swap(true, Ordering::SeqCst) {
            tracing::info!("maintenance leadership gained: this instance now runs the reaper and lapsed-lease triage");
        }
    }

    fn refused(&self) {
        self.until.store(i64::MIN, Ordering::SeqCst);
        if self.leading.swap(false, Ordering::SeqCst) {
            tracing::info!("maintenance leadership lost: another instance leads");
        }
    }
}

/// Campaigns once: wins, keeps or loses the term. A store error keeps the
/// current term until it lapses.
pub(crate) async fn campaign_once(shared: &Shared) -> bool {
    let leader = &shared.leader;
    let now = shared.now();
    let until = now.plus(leader.lease);
    match leader.leadership.campaign(&shared.owner, now, until).await {
        Ok(true) => {
            leader.gained(until);
            true
        }
        Ok(false) => {
            leader.refused();
            false
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot campaign for maintenance leadership");
            leader.leads(now)
        }
    }
}

/// The maintenance pass, if this runtime leads: a reaper pass, then
/// lapsed-lease triage. `None` when another leads.
pub(crate) async fn maintain_once(shared: &Shared) -> Result<Option<(ReapReport, TriageReport)>, RuntimeError> {
    if !shared.leader.leads(shared.now()) {
        return Ok(None);
    }
    let reaped = reaper::reap_once(shared).await?;
    let report = triage::triage_once(shared, TriageScope::ExpiredLeases).await?;
    if report.total() > 0 {
        tracing::info!(
            resumed = report.resumed,
            reasked = report.reasked,
            failed = report.failed,
            poisoned = report.poisoned,
            cancelled = report.cancelled,
            "lapsed-lease triage: {report}"
        );
    }
    Ok(Some((reaped, report)))
}

/// Campaigns at once, then every third of the lease, until the runtime
/// stops or is dropped.
pub(crate) fn spawn_campaign(shared: &Arc<Shared>) -> JoinHandle<()> {
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let stop = shared.background_stop.clone();
    let every = shared.leader.lease / 3;
    tokio::spawn(async move {
        loop {
            let Some(shared) = weak.upgrade() else { return };
            campaign_once(&shared).await;
            drop(shared);
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
        }
    })
}

/// Ends this runtime's term at shutdown, so another takes over at once.
pub(crate) async fn resign(shared: &Shared) {
    let leader = &shared.leader;
    if !leader.leading.swap(false, Ordering::SeqCst) {
        return;
    }
    leader.until.store(i64::MIN, Ordering::SeqCst);
    match leader.leadership.resign(&shared.owner).await {
        Ok(()) => tracing::info!("maintenance leadership handed back at shutdown"),
        Err(e) => tracing::warn!(error = %e, "cannot hand back maintenance leadership; it lapses by itself"),
    }
}

impl Runtime {
    /// Campaigns for maintenance leadership once (the background loop does
    /// this every third of the leader lease); returns whether this runtime
    /// leads now.
    pub async fn campaign_once(&self) -> bool {
        campaign_once(&self.shared).await
    }

    /// Whether this runtime leads maintenance now (by its clock, against
    /// the end of the term it last won).
    pub fn is_leader(&self) -> bool {
        self.shared.leader.leads(self.shared.now())
    }

    /// The leader's maintenance pass: if this runtime leads, one reaper pass
    /// and then lapsed-lease triage (what the reaper timer runs); `None` if
    /// it does not lead.
    pub async fn maintain_once(&self) -> Result<Option<(ReapReport, TriageReport)>, RuntimeError> {
        maintain_once(&self.shared).await
    }
}
