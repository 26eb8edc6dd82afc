//! Lease renewal, the pass every running handler's driver runs at a third
//! of the lease: extend the lease guarded on this claim's own holder and
//! attempt, and act on what the core reads in the answer
//! ([`mcp_tasks_core::lease::after_renewal`]).

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::lease::{AfterRenewal, LeaseTerms, after_renewal};
use mcp_tasks_core::{Clock, Lease, TaskId, Timestamp};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, TaskStore, UpdateOutcome};

use crate::cas;
use crate::metrics::Metrics;
use crate::running::{RunningHandler, StopReason};

/// Renews the leases of this runtime's handlers.
pub(crate) struct LeaseKeeper {
    store: Arc<dyn TaskStore>,
    clock: Arc<dyn Clock>,
    terms: LeaseTerms,
    metrics: Metrics,
}

impl LeaseKeeper {
    pub(crate) fn new(store: Arc<dyn TaskStore>, clock: Arc<dyn Clock>, terms: LeaseTerms, metrics: Metrics) -> Self {
        LeaseKeeper { store, clock, terms, metrics }
    }

    /// The lease a new claim by `holder` takes at `now`.
    pub(crate) fn lease(&self, holder: &str, now: Timestamp) -> Lease {
        self.terms.lease(holder, now)
    }

    /// How long a driver waits between renewals.
    pub(crate) fn renew_every(&self) -> Duration {
        self.terms.renew_every()
    }

    /// Extends the lease of `handler`'s claim on `id`, which holds until
    /// `lease_until` (moved on by a renewal); returns whether to keep
    /// renewing. A lost renewal means someone else owns the task now: the
    /// handler is told to stop. So does a lease that lapsed while the store
    /// could not be reached (self-fencing): another instance may take the
    /// task over from then on, and this handler's writes would be refused anyway.
    pub(crate) async fn renew(&self, id: &TaskId, handler: &RunningHandler, lease_until: &mut Timestamp) -> bool {
        let now = self.clock.now();
        let guard =
            Guard { lease_owner: Some(handler.holder.clone()), attempt: Some(handler.attempt), ..Guard::id(id.clone()) };
        let lease = self.terms.lease(&handler.holder, now);
        let expires_at = lease.expires_at;
        let change = Change { now, lease: Some(Some(lease)), ..Change::default() };
        let renewed = match cas::apply_one(self.store.as_ref(), GuardedUpdate::change(guard, change)).await {
            Ok(UpdateOutcome::Applied(row)) => {
                *lease_until = expires_at;
                row
            }
            Ok(_) => None,
            Err(e) if now >= *lease_until => {
                tracing::warn!(
                    task = %id,
                    error = %e,
                    "lease lapsed while the store was unavailable: stopping the handler (another instance may take the task over)"
                );
                self.metrics.lease_expired();
                handler.stop(StopReason::LeaseLost);
                return false;
            }
            Err(e) => {
                // Keep the handler: the next renewal may get through before the lease lapses.
                tracing::warn!(task = %id, error = %e, "lease renewal failed");
                return true;
            }
        };
        match after_renewal(renewed.as_ref()) {
            AfterRenewal::Renewing => true,
            AfterRenewal::StopForCancel => {
                // A cancel acknowledged by another instance.
                handler.stop(StopReason::CancelRequested);
                true
            }
            AfterRenewal::LeaseLost => {
                tracing::info!(task = %id, attempt = handler.attempt, "lease renewal lost: the task was taken over or ended");
                self.metrics.lease_expired();
                handler.stop(StopReason::LeaseLost);
                false
            }
        }
    }
}
