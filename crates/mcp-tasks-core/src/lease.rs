//! An executor's lease on a running task: how long it lasts, when it is
//! renewed, and what a renewal's answer means for the handler. The runtime
//! writes the lease as a compare-and-set guarded on its own holder.

use std::time::Duration;

use crate::task::{Lease, TaskRecord};
use crate::time::Timestamp;

/// The share of a lease after which it is renewed: at a third, two renewals
/// can fail before it lapses.
pub const RENEW_AT: u32 = 3;

/// The lease terms of one runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTerms {
    /// How long a lease lasts unless renewed.
    pub duration: Duration,
}

impl LeaseTerms {
    /// The lease `holder` takes (or renews) at `now`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_tasks_core::lease::LeaseTerms;
    /// use mcp_tasks_core::Timestamp;
    ///
    /// let terms = LeaseTerms { duration: Duration::from_secs(30) };
    /// let lease = terms.lease("executor-1/7", Timestamp::from_secs(100));
    /// assert_eq!(lease.expires_at, Timestamp::from_secs(130));
    /// assert_eq!(terms.renew_every(), Duration::from_secs(10));
    /// ```
    pub fn lease(&self, holder: &str, now: Timestamp) -> Lease {
        Lease { owner: holder.to_owned(), expires_at: now.plus(self.duration) }
    }

    /// How long a handler's driver waits between renewals.
    pub fn renew_every(&self) -> Duration {
        self.duration / RENEW_AT
    }
}

/// What the handler does after a renewal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterRenewal {
    /// Renewed; keep going.
    Renewing,
    /// Renewed, and the row says a client asked to cancel (acknowledged by
    /// another instance): tell the handler to stop; keep renewing until it does.
    StopForCancel,
    /// The guarded renewal lost: another claim, the reaper or triage owns
    /// the task now. Stop the handler and renew no more.
    LeaseLost,
}

/// Judges a renewal by the row it wrote (`None`: the guard did not hold).
pub fn after_renewal(renewed: Option<&TaskRecord>) -> AfterRenewal {
    match renewed {
        Some(row) if row.cancel_requested => AfterRenewal::StopForCancel,
        Some(_) => AfterRenewal::Renewing,
        None => AfterRenewal::LeaseLost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::TaskStatus;
    use crate::testing::record;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_lease_outlives_two_missed_renewals(ms in 100u64..10_000_000, now in 0i64..1_000_000) {
            let terms = LeaseTerms { duration: Duration::from_millis(ms) };
            let now = Timestamp::from_millis(now);
            let lease = terms.lease("e/1", now);
            prop_assert!(lease.expires_at > now.plus(terms.renew_every() * 2));
            prop_assert_eq!(lease.expires_at, now.plus(terms.duration));
        }
    }

    #[test]
    fn a_renewal_reads_the_cancel_flag() {
        let mut row = record(TaskStatus::Working, 0);
        assert_eq!(after_renewal(Some(&row)), AfterRenewal::Renewing);
        row.cancel_requested = true;
        assert_eq!(after_renewal(Some(&row)), AfterRenewal::StopForCancel);
        assert_eq!(after_renewal(None), AfterRenewal::LeaseLost);
    }
}
