//! Retention: how long tasks live, when silence means abandonment, and the
//! honest `ttlMs` (a promise measured from `createdAt`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::status::TaskStatus;
use crate::task::TaskRecord;
use crate::time::Timestamp;

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
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        RetentionPolicy {
            completed: Duration::from_secs(3600),
            failed: Duration::from_secs(3600),
            cancelled: Duration::from_secs(3600),
            orphan_after: Duration::from_secs(900),
            max_execution: Duration::from_secs(1800),
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

    /// Checks the windows make sense together, naming what does not.
    pub fn validate(&self) -> Result<(), String> {
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
}
