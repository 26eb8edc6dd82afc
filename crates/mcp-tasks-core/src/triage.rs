//! Triage of in-flight work whose executor died (paper §5.2): a lapsed lease,
//! or every lease after a single-node restart. Nothing is silently dropped.

use crate::status::TaskStatus;
use crate::task::{TaskError, TaskRecord};
use crate::time::Timestamp;

/// What happens to a task whose executor died.
#[derive(Debug, Clone, PartialEq)]
pub enum TriageDecision {
    /// The client had asked to cancel: honour it.
    Cancel,
    /// Past its deadline: fail it as a timeout.
    FailTimeout(TaskError),
    /// Out of attempts (a crash counts as one): fail as poison and dead-letter it.
    Poison(TaskError),
    /// Run it again as `next_attempt`.
    Resume {
        /// The attempt number of the re-run.
        next_attempt: u32,
    },
    /// The tool is not safe to re-run: fail it, saying so.
    FailNotRerunnable(TaskError),
}

impl TriageDecision {
    /// The status the task ends up in.
    pub fn resulting_status(&self) -> TaskStatus {
        match self {
            TriageDecision::Cancel => TaskStatus::Cancelled,
            TriageDecision::Resume { .. } => TaskStatus::Working,
            _ => TaskStatus::Failed,
        }
    }
}

/// Decides the fate of a live task whose executor died. `rerunnable` says
/// whether its tool may safely run again from the start.
pub fn triage(record: &TaskRecord, now: Timestamp, rerunnable: bool) -> TriageDecision {
    if record.cancel_requested {
        return TriageDecision::Cancel;
    }
    if record.deadline_at <= now {
        return TriageDecision::FailTimeout(crate::reaper::timeout_error(record));
    }
    if record.attempt >= record.max_attempts {
        return TriageDecision::Poison(
            TaskError::internal(format!(
                "task failed as poison: its executor died on attempt {} of {}",
                record.attempt, record.max_attempts
            ))
            .with_data(serde_json::json!({"reason": "poison", "attempts": record.attempt})),
        );
    }
    if !rerunnable {
        return TriageDecision::FailNotRerunnable(
            TaskError::internal(format!(
                "task interrupted: the server stopped while tool {:?} was running, and the tool is not safe to re-run",
                record.tool
            ))
            .with_data(serde_json::json!({"reason": "interrupted"})),
        );
    }
    TriageDecision::Resume { next_attempt: record.attempt + 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::record;
    use proptest::prelude::*;

    #[test]
    fn order_of_checks() {
        let now = Timestamp::from_secs(10);
        let mut t = record(TaskStatus::Working, 0);
        assert_eq!(triage(&t, now, true), TriageDecision::Resume { next_attempt: 2 });
        assert!(matches!(triage(&t, now, false), TriageDecision::FailNotRerunnable(_)));
        t.attempt = 3;
        assert!(matches!(triage(&t, now, true), TriageDecision::Poison(_)));
        t.deadline_at = now;
        assert!(matches!(triage(&t, now, true), TriageDecision::FailTimeout(_)));
        t.cancel_requested = true;
        assert_eq!(triage(&t, now, true), TriageDecision::Cancel);
    }

    proptest! {
        #[test]
        fn resumed_attempts_never_exceed_the_ceiling(attempt in 1u32..10, max in 1u32..10, rerun: bool) {
            let mut t = record(TaskStatus::Working, 0);
            t.attempt = attempt.min(max);
            t.max_attempts = max;
            if let TriageDecision::Resume { next_attempt } = triage(&t, Timestamp::from_secs(1), rerun) {
                prop_assert!(next_attempt <= max);
            }
        }
    }
}
