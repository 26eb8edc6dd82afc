//! What a client's cancel does to a task (the `tasks/cancel` decision): end
//! it at once, only record the request for its executor to honour, or
//! nothing at all. The runtime applies the answer as a compare-and-set on
//! the row it read.

use crate::task::TaskRecord;
use crate::time::Timestamp;

/// What a cancel request does to one task, read at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelDecision {
    /// Nothing to write: the task is already terminal, or its cancel was
    /// already acknowledged while a live lease holds it (its executor will
    /// end it `cancelled`).
    Unchanged,
    /// A live lease holds it: record the request durably; the executor ends
    /// it `cancelled` when its handler stops.
    Request,
    /// Nobody executes it (queued, waiting to retry, or its lease lapsed, so
    /// its executor is dead or stalled and would never honour a flag): end it
    /// `cancelled` now. A late write by a stalled executor loses its guard.
    CancelNow,
}

/// Whether `record` is held by a lease that has not lapsed at `now`.
pub fn is_leased(record: &TaskRecord, now: Timestamp) -> bool {
    record.lease.as_ref().is_some_and(|l| l.expires_at > now)
}

/// Decides what a cancel of `record` does at `now`.
///
/// ```
/// use mcp_tasks_core::cancel::{decide_cancel, CancelDecision};
/// use mcp_tasks_core::{Lease, TaskId, TaskRecord, Timestamp};
///
/// let now = Timestamp::from_secs(100);
/// let created = Timestamp::from_secs(0);
/// let mut task = TaskRecord::queued(TaskId::from("t"), "report", serde_json::json!({}), created, Timestamp::from_secs(1800), 3);
/// // Queued, nobody runs it: cancelled at once.
/// assert_eq!(decide_cancel(&task, now), CancelDecision::CancelNow);
/// // Running under a live lease: only requested.
/// task.lease = Some(Lease { owner: "executor-1/1".into(), expires_at: Timestamp::from_secs(130) });
/// assert_eq!(decide_cancel(&task, now), CancelDecision::Request);
/// task.cancel_requested = true;
/// assert_eq!(decide_cancel(&task, now), CancelDecision::Unchanged);
/// // The lease lapsed: its executor will never look at the flag.
/// assert_eq!(decide_cancel(&task, Timestamp::from_secs(130)), CancelDecision::CancelNow);
/// ```
pub fn decide_cancel(record: &TaskRecord, now: Timestamp) -> CancelDecision {
    let leased = is_leased(record, now);
    if record.status.is_terminal() || (record.cancel_requested && leased) {
        CancelDecision::Unchanged
    } else if leased {
        CancelDecision::Request
    } else {
        CancelDecision::CancelNow
    }
}

/// The status message a task shows once its cancel is requested but not yet honoured.
pub const CANCEL_REQUESTED: &str = "cancellation requested";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{ALL_STATUSES, TaskStatus};
    use crate::task::Lease;
    use crate::testing::record;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_terminal_task_is_never_touched_and_a_live_one_always_is_unless_acknowledged(
            status in prop::sample::select(ALL_STATUSES.to_vec()),
            requested: bool,
            lease_until in proptest::option::of(0i64..200),
            now in 0i64..200,
        ) {
            let mut t = record(status, 0);
            t.cancel_requested = requested;
            t.lease = lease_until.map(|s| Lease { owner: "e/1".into(), expires_at: Timestamp::from_secs(s) });
            let now = Timestamp::from_secs(now);
            let decision = decide_cancel(&t, now);
            if status.is_terminal() {
                prop_assert_eq!(decision, CancelDecision::Unchanged);
            } else if is_leased(&t, now) {
                let expected = if requested { CancelDecision::Unchanged } else { CancelDecision::Request };
                prop_assert_eq!(decision, expected);
            } else {
                // No live lease: a flag would never be read, so it ends now.
                prop_assert_eq!(decision, CancelDecision::CancelNow);
            }
        }
    }

    #[test]
    fn a_lease_expiring_exactly_now_has_lapsed() {
        let mut t = record(TaskStatus::Working, 0);
        t.lease = Some(Lease { owner: "e/1".into(), expires_at: Timestamp::from_secs(10) });
        assert!(is_leased(&t, Timestamp::from_secs(9)));
        assert!(!is_leased(&t, Timestamp::from_secs(10)));
    }
}
