//! The reaper's decisions (paper §5.1): timeouts first, then orphans, then
//! expiry — the only sweep that deletes. The runtime runs one pass per kind,
//! in this order, and applies each decision as a compare-and-set on the row
//! it read, so a task that changed meanwhile is left alone.

use crate::retention::RetentionPolicy;
use crate::status::TaskStatus;
use crate::task::{TaskError, TaskRecord};
use crate::time::Timestamp;

/// The three sweeps, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sweep {
    /// Live tasks past their execution deadline become `failed`.
    Timeouts,
    /// Live tasks unpolled for the orphan window become `cancelled`.
    Orphans,
    /// Terminal tasks past retention are deleted.
    Expiry,
}

/// The sweeps in the order the reaper runs them.
pub const SWEEP_ORDER: [Sweep; 3] = [Sweep::Timeouts, Sweep::Orphans, Sweep::Expiry];

/// What the reaper does to one task.
#[derive(Debug, Clone, PartialEq)]
pub enum ReaperAction {
    /// Fail it with a timeout error.
    FailTimeout(TaskError),
    /// Cancel it as abandoned, with a status message saying so.
    CancelOrphan(String),
    /// End it `cancelled` as its client asked: a task whose cancel was
    /// acknowledged ends cancelled even when its deadline passes before its
    /// handler has stopped.
    FinishCancel,
    /// Delete it.
    Delete,
}

/// Inputs that are the same for every task in one pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepContext<'a> {
    /// Now.
    pub now: Timestamp,
    /// The windows.
    pub retention: &'a RetentionPolicy,
    /// Poll timestamps older than this instance's start may have been lost
    /// (they are written in batches): silence is measured from no earlier
    /// than this, so a restart never mistakes lost polls for abandonment.
    pub silence_floor: Timestamp,
}

impl SweepContext<'_> {
    /// The silence cutoff for the orphan sweep, or `None` when this
    /// instance has not yet watched long enough to call anything an orphan.
    /// It is the orphan window plus the poll slack before now: a stored
    /// last-seen instant trails the true last poll by less than the slack
    /// ([`RetentionPolicy::poll_needs_record`]).
    pub fn orphan_cutoff(&self) -> Option<Timestamp> {
        let cutoff = self.now.minus(self.retention.orphan_after).minus(self.retention.poll_slack());
        (self.silence_floor <= cutoff).then_some(cutoff)
    }
}

/// The error a timed-out task fails with.
pub fn timeout_error(record: &TaskRecord) -> TaskError {
    TaskError::internal(format!(
        "task timed out: not finished by its deadline {} ms after creation",
        record.deadline_at.as_millis() - record.created_at.as_millis()
    ))
    .with_data(serde_json::json!({"reason": "timeout"}))
}

/// What `sweep` does to `record`, if anything. Never acts on a terminal task
/// except to delete it once expired.
///
/// ```
/// use std::time::Duration;
/// use mcp_tasks_core::reaper::{decide, ReaperAction, Sweep, SweepContext};
/// use mcp_tasks_core::{RetentionPolicy, TaskId, TaskRecord, Timestamp};
///
/// let retention = RetentionPolicy::default(); // orphan window 900 s, poll slack 112.5 s
/// let task = TaskRecord::queued(TaskId::from("t"), "report", serde_json::json!({}),
///                               Timestamp::from_secs(0), Timestamp::from_secs(1800), 3);
/// let at = |s| SweepContext { now: Timestamp::from_secs(s), retention: &retention, silence_floor: Timestamp::from_secs(0) };
/// // Unpolled for the whole window and the slack: cancelled as an orphan.
/// assert_eq!(decide(Sweep::Orphans, &task, &at(1012)), None);
/// assert!(matches!(decide(Sweep::Orphans, &task, &at(1013)), Some(ReaperAction::CancelOrphan(_))));
/// // Past its deadline: failed as a timeout.
/// assert!(matches!(decide(Sweep::Timeouts, &task, &at(1800)), Some(ReaperAction::FailTimeout(_))));
/// // A live task is never deleted.
/// assert_eq!(decide(Sweep::Expiry, &task, &at(1_000_000)), None);
/// ```
pub fn decide(sweep: Sweep, record: &TaskRecord, ctx: &SweepContext<'_>) -> Option<ReaperAction> {
    match sweep {
        Sweep::Timeouts => (record.status.is_live() && record.deadline_at <= ctx.now).then(|| {
            if record.cancel_requested {
                ReaperAction::FinishCancel
            } else {
                ReaperAction::FailTimeout(timeout_error(record))
            }
        }),
        Sweep::Orphans => {
            let cutoff = ctx.orphan_cutoff()?;
            (record.status.is_live() && record.last_seen_at() <= cutoff).then(|| {
                ReaperAction::CancelOrphan(format!(
                    "cancelled: no client polled this task for {} s (the server's orphan window)",
                    ctx.retention.orphan_after.as_secs()
                ))
            })
        }
        // `createdAt + shortest retention` is what a live task's ttlMs
        // promised; a clock stepped back between creation and the end must
        // not make the expiry come sooner.
        Sweep::Expiry => (record.status.is_terminal()
            && record.expires_at.is_some_and(|e| e <= ctx.now)
            && record.created_at.plus(ctx.retention.shortest()) <= ctx.now)
            .then_some(ReaperAction::Delete),
    }
}

/// The status a reaper action leaves the task in (`None` for a deletion).
pub fn resulting_status(action: &ReaperAction) -> Option<TaskStatus> {
    match action {
        ReaperAction::FailTimeout(_) => Some(TaskStatus::Failed),
        ReaperAction::CancelOrphan(_) | ReaperAction::FinishCancel => Some(TaskStatus::Cancelled),
        ReaperAction::Delete => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::record;
    use proptest::prelude::*;
    use std::time::Duration;

    fn ctx(now: i64, r: &RetentionPolicy) -> SweepContext<'_> {
        SweepContext { now: Timestamp::from_secs(now), retention: r, silence_floor: Timestamp::from_secs(0) }
    }

    #[test]
    fn timeouts_orphans_expiry() {
        let r = RetentionPolicy { poll_slack_share: 0.0, ..Default::default() };
        let t = record(TaskStatus::Working, 0);
        assert!(matches!(decide(Sweep::Timeouts, &t, &ctx(1800, &r)), Some(ReaperAction::FailTimeout(_))));
        assert_eq!(decide(Sweep::Timeouts, &t, &ctx(1799, &r)), None);
        // Orphan window is inclusive.
        assert!(matches!(decide(Sweep::Orphans, &t, &ctx(900, &r)), Some(ReaperAction::CancelOrphan(_))));
        assert_eq!(decide(Sweep::Orphans, &t, &ctx(899, &r)), None);
        // The default slack (an eighth of the window) comes on top.
        let slack = RetentionPolicy::default();
        let at_ms =
            |ms| SweepContext { now: Timestamp::from_millis(ms), retention: &slack, silence_floor: Timestamp::from_secs(0) };
        assert_eq!(decide(Sweep::Orphans, &t, &at_ms(1_012_499)), None);
        assert!(matches!(decide(Sweep::Orphans, &t, &at_ms(1_012_500)), Some(ReaperAction::CancelOrphan(_))));
        let mut done = record(TaskStatus::Completed, 0);
        done.expires_at = Some(Timestamp::from_secs(3600));
        assert_eq!(decide(Sweep::Expiry, &done, &ctx(3600, &r)), Some(ReaperAction::Delete));
        assert_eq!(decide(Sweep::Expiry, &done, &ctx(3599, &r)), None);
    }

    #[test]
    fn an_acknowledged_cancel_past_its_deadline_ends_cancelled() {
        let r = RetentionPolicy::default();
        let mut t = record(TaskStatus::Working, 0);
        t.cancel_requested = true;
        let action = decide(Sweep::Timeouts, &t, &ctx(1800, &r));
        assert_eq!(action, Some(ReaperAction::FinishCancel));
        assert_eq!(resulting_status(&ReaperAction::FinishCancel), Some(TaskStatus::Cancelled));
    }

    #[test]
    fn expiry_never_comes_before_the_promise_to_a_live_task() {
        // The clock stepped back: the task ended "before" it was created.
        let r = RetentionPolicy::default();
        let mut done = record(TaskStatus::Completed, 1000);
        done.expires_at = Some(Timestamp::from_secs(900).plus(r.completed));
        let promised = done.created_at.plus(r.shortest());
        let at = |t: Timestamp| SweepContext { now: t, retention: &r, silence_floor: Timestamp::from_secs(0) };
        assert_eq!(decide(Sweep::Expiry, &done, &at(done.expires_at.unwrap())), None);
        assert_eq!(decide(Sweep::Expiry, &done, &at(promised)), Some(ReaperAction::Delete));
    }

    #[test]
    fn a_fresh_instance_does_not_trust_old_silence() {
        let r = RetentionPolicy::default();
        let t = record(TaskStatus::Working, 0);
        let c = SweepContext { now: Timestamp::from_secs(1000), retention: &r, silence_floor: Timestamp::from_secs(500) };
        assert_eq!(decide(Sweep::Orphans, &t, &c), None);
        // A whole window and the slack (112.5 s) after the floor.
        let c =
            SweepContext { now: Timestamp::from_millis(1_512_499), retention: &r, silence_floor: Timestamp::from_secs(500) };
        assert_eq!(decide(Sweep::Orphans, &t, &c), None);
        let c =
            SweepContext { now: Timestamp::from_millis(1_512_500), retention: &r, silence_floor: Timestamp::from_secs(500) };
        assert!(decide(Sweep::Orphans, &t, &c).is_some());
    }

    proptest! {
        /// Polls written only when `poll_needs_record` says so never make a
        /// task an orphan before a whole window of true silence, and it is
        /// one once silent for the window and the slack.
        #[test]
        fn skipped_polls_never_orphan_early(share in prop_oneof![Just(0.0), Just(0.125), 0.0f64..=0.5],
                                            gaps in prop::collection::vec(0i64..400_000, 0..40),
                                            after_last in 0i64..2_000_000) {
            let r = RetentionPolicy { orphan_after: Duration::from_secs(600), poll_slack_share: share, ..Default::default() };
            let mut t = record(TaskStatus::Working, 0);
            let mut last_poll = Timestamp::from_millis(0);
            for gap in gaps {
                last_poll = Timestamp::from_millis(last_poll.as_millis() + gap);
                if r.poll_needs_record(t.last_seen_at(), last_poll) {
                    t.last_polled_at = Some(last_poll);
                }
            }
            let now = Timestamp::from_millis(last_poll.as_millis() + after_last);
            let c = SweepContext { now, retention: &r, silence_floor: Timestamp::from_millis(0) };
            let orphaned = decide(Sweep::Orphans, &t, &c).is_some();
            let silence = now.since(last_poll);
            if orphaned {
                prop_assert!(silence >= r.orphan_after, "orphaned after {silence:?} of silence");
            }
            if silence >= r.orphan_after + r.poll_slack() {
                prop_assert!(orphaned, "still live after {silence:?} of silence");
            }
        }

        #[test]
        fn terminal_tasks_are_only_ever_deleted(status in prop::sample::select(crate::status::ALL_STATUSES.to_vec()),
                                                 now in 0i64..100_000, created in 0i64..50_000,
                                                 polled in proptest::option::of(0i64..100_000),
                                                 expires in proptest::option::of(0i64..100_000)) {
            let r = RetentionPolicy { orphan_after: Duration::from_secs(60), ..Default::default() };
            let mut t = record(status, created);
            t.last_polled_at = polled.map(Timestamp::from_secs);
            t.expires_at = expires.map(Timestamp::from_secs);
            for sweep in SWEEP_ORDER {
                if let Some(action) = decide(sweep, &t, &ctx(now, &r)) {
                    if status.is_terminal() {
                        prop_assert_eq!(action, ReaperAction::Delete);
                    } else {
                        prop_assert_ne!(action, ReaperAction::Delete);
                    }
                }
            }
        }
    }
}
