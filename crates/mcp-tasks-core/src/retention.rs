//! Retention: how long tasks live, when silence means abandonment, and the
//! honest `ttlMs` (a promise measured from `createdAt`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::status::TaskStatus;
use crate::task::TaskRecord;
use crate::time::Timestamp;

/// The default [`RetentionPolicy::poll_slack_share`]: an eighth of the
/// orphan window (112.5 s of the default 900 s).
pub const DEFAULT_POLL_SLACK_SHARE: f64 = 0.125;

/// The largest [`RetentionPolicy::poll_slack_share`] accepted: beyond half
/// the window an abandoned task would linger longer than half again.
pub const LARGEST_POLL_SLACK_SHARE: f64 = 0.5;

/// Retention and reclamation windows (paper §5.1 defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionPolicy {
    /// How long a completed task is kept after it ends.
    #[serde(with = "crate::serde_duration")]
    pub completed: Duration,
    /// How long a failed task is kept after it ends.
    #[serde(with = "crate::serde_duration")]
    pub failed: Duration,
    /// How long a cancelled task is kept after it ends.
    #[serde(with = "crate::serde_duration")]
    pub cancelled: Duration,
    /// A live task unpolled this long is presumed abandoned and cancelled.
    #[serde(with = "crate::serde_duration")]
    pub orphan_after: Duration,
    /// A task must be terminal this long after creation, or it times out.
    #[serde(with = "crate::serde_duration")]
    pub max_execution: Duration,
    /// How stale a task's stored last-seen instant may grow, as a share of
    /// `orphan_after` (0 to 0.5): a `tasks/get` whose task was seen more
    /// recently than this writes nothing, and the orphan sweep waits this
    /// much longer than `orphan_after`, so no task is cancelled before
    /// `orphan_after` of true silence. A poll then costs a read, not a
    /// write, however many tasks are polled; an abandoned task is cancelled
    /// up to this much later. 0 writes every poll and cancels at exactly
    /// `orphan_after` (what the study replays).
    pub poll_slack_share: f64,
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        RetentionPolicy {
            completed: Duration::from_secs(3600),
            failed: Duration::from_secs(3600),
            cancelled: Duration::from_secs(3600),
            orphan_after: Duration::from_secs(900),
            max_execution: Duration::from_secs(1800),
            poll_slack_share: DEFAULT_POLL_SLACK_SHARE,
        }
    }
}

impl RetentionPolicy {
    /// How long a task ending in `status` is kept (zero for a live status).
    pub fn keep_for(&self, status: TaskStatus) -> Duration {
        match status {
            TaskStatus::Completed => self.completed,
            TaskStatus::Failed => self.failed,
            TaskStatus::Cancelled => self.cancelled,
            TaskStatus::Working | TaskStatus::InputRequired => Duration::ZERO,
        }
    }

    /// The shortest retention of any outcome: what a live task can promise.
    pub fn shortest(&self) -> Duration {
        self.completed.min(self.failed).min(self.cancelled)
    }

    /// When a task ending in `status` at `terminal_at` may be deleted.
    pub fn expires_at(&self, status: TaskStatus, terminal_at: Timestamp) -> Timestamp {
        terminal_at.plus(self.keep_for(status))
    }

    /// `ttlMs` for the wire: never shorter than what the server will keep.
    /// A live task is kept at least until it ends plus the shortest
    /// retention, which is later than `createdAt + shortest`; a terminal task
    /// until its `expires_at`.
    pub fn ttl_ms(&self, record: &TaskRecord) -> i64 {
        match record.expires_at {
            Some(exp) if record.status.is_terminal() => (exp.as_millis() - record.created_at.as_millis()).max(0),
            _ => crate::time::duration_millis(self.shortest()),
        }
    }

    /// How stale a stored last-seen instant may be: `poll_slack_share` of
    /// the orphan window (zero for a share outside what `validate` accepts).
    pub fn poll_slack(&self) -> Duration {
        if self.poll_slack_share > 0.0 && self.poll_slack_share <= LARGEST_POLL_SLACK_SHARE {
            self.orphan_after.mul_f64(self.poll_slack_share)
        } else {
            Duration::ZERO
        }
    }

    /// Whether a poll at `now` of a task whose stored last-seen instant is
    /// `last_seen` must be written: only once that instant is at least
    /// [`poll_slack`](Self::poll_slack) old. The stored instant thus trails
    /// the true last poll by less than the slack, which the orphan sweep
    /// adds to its window.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_tasks_core::{RetentionPolicy, Timestamp};
    ///
    /// let p = RetentionPolicy { orphan_after: Duration::from_secs(800), poll_slack_share: 0.125, ..Default::default() };
    /// let seen = Timestamp::from_secs(1_000);
    /// assert!(!p.poll_needs_record(seen, Timestamp::from_secs(1_099)), "seen 99 s ago: within the 100 s slack");
    /// assert!(p.poll_needs_record(seen, Timestamp::from_secs(1_100)));
    /// let exact = RetentionPolicy { poll_slack_share: 0.0, ..p };
    /// assert!(exact.poll_needs_record(seen, seen), "no slack: every poll is written");
    /// ```
    pub fn poll_needs_record(&self, last_seen: Timestamp, now: Timestamp) -> bool {
        let slack = self.poll_slack();
        slack.is_zero() || last_seen <= now.minus(slack)
    }

    /// Checks the windows make sense together, naming what does not.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=LARGEST_POLL_SLACK_SHARE).contains(&self.poll_slack_share) {
            return Err(format!(
                "retention.poll_slack_share ({}) must be between 0 and {LARGEST_POLL_SLACK_SHARE}: \
                 it is the share of orphan_after a stored poll instant may trail the last poll by",
                self.poll_slack_share
            ));
        }
        if self.orphan_after.is_zero() {
            return Err("retention.orphan_after must be positive".into());
        }
        if self.max_execution.is_zero() {
            return Err("retention.max_execution must be positive".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_outcome_retention() {
        let p =
            RetentionPolicy { completed: Duration::from_secs(10), failed: Duration::from_secs(20), ..Default::default() };
        let t = Timestamp::from_secs(100);
        assert_eq!(p.expires_at(TaskStatus::Completed, t), Timestamp::from_secs(110));
        assert_eq!(p.expires_at(TaskStatus::Failed, t), Timestamp::from_secs(120));
        assert_eq!(p.shortest(), Duration::from_secs(10));
    }

    #[test]
    fn a_poll_slack_share_outside_zero_to_a_half_is_refused_by_name() {
        for share in [-0.01, 0.51, f64::NAN, f64::INFINITY] {
            let p = RetentionPolicy { poll_slack_share: share, ..Default::default() };
            let error = p.validate().expect_err("refused");
            assert!(error.contains("retention.poll_slack_share"), "{share}: {error}");
            assert_eq!(p.poll_slack(), Duration::ZERO, "{share}: no slack, every poll written");
        }
        for share in [0.0, 0.125, 0.5] {
            assert_eq!(RetentionPolicy { poll_slack_share: share, ..Default::default() }.validate(), Ok(()), "{share}");
        }
        let half = RetentionPolicy { poll_slack_share: 0.5, ..Default::default() };
        assert_eq!(half.poll_slack(), Duration::from_secs(450));
    }
}
