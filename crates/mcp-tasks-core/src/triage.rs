//! Triage of in-flight work whose executor died (paper §5.2): a lapsed lease,
//! or every lease after a single-node restart. Nothing is silently dropped,
//! and a task that was only waiting for its client is asked again without
//! being charged an attempt: it was executing nothing when its executor died.

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
    /// The task was waiting for input: run it again as the same `attempt`
    /// (its stored requests and answers make the re-run ask again, or go on
    /// with answers that arrived meanwhile).
    Reask {
        /// The attempt, unchanged.
        attempt: u32,
    },
}

impl TriageDecision {
    /// The status the task ends up in.
    pub fn resulting_status(&self) -> TaskStatus {
        match self {
            TriageDecision::Cancel => TaskStatus::Cancelled,
            TriageDecision::Resume { .. } | TriageDecision::Reask { .. } => TaskStatus::Working,
            _ => TaskStatus::Failed,
        }
    }
}

/// Whether the task was waiting for its client when its executor died: it
/// shows `input_required`, or it still has unanswered requests (a re-asked
/// task claimed again, killed before its handler could ask again). A handler
/// leaves `input_required` only once every request is answered, so pending
/// requests on a `working` task mean no answered question is being worked on.
pub fn was_waiting_for_input(record: &TaskRecord) -> bool {
    record.status == TaskStatus::InputRequired || record.pending_input().next().is_some()
}

/// Decides the fate of a live task whose executor died. `rerunnable` says
/// whether its tool may safely run again from the start.
///
/// In order: a requested cancel is honoured; a task past its deadline fails;
/// a task waiting for input is asked again as the same attempt (unless its
/// tool may not run again: re-asking re-runs what came before the question);
/// a task on its last attempt is poison; otherwise it resumes as the next
/// attempt.
///
/// ```
/// use mcp_tasks_core::{triage, TaskId, TaskRecord, TaskStatus, Timestamp, TriageDecision};
///
/// let now = Timestamp::from_secs(60);
/// let mut task = TaskRecord::queued(TaskId::from("t"), "report", serde_json::json!({}),
///                                   Timestamp::from_secs(0), Timestamp::from_secs(1800), 3);
/// // Its executor died mid-run: a crash counts as an attempt.
/// assert_eq!(triage(&task, now, true), TriageDecision::Resume { next_attempt: 2 });
/// // It was only waiting for its client: asked again, attempt unspent.
/// task.status = TaskStatus::InputRequired;
/// assert_eq!(triage(&task, now, true), TriageDecision::Reask { attempt: 1 });
/// // A requested cancel comes first.
/// task.cancel_requested = true;
/// assert_eq!(triage(&task, now, true), TriageDecision::Cancel);
/// ```
pub fn triage(record: &TaskRecord, now: Timestamp, rerunnable: bool) -> TriageDecision {
    if record.cancel_requested {
        return TriageDecision::Cancel;
    }
    if record.deadline_at <= now {
        return TriageDecision::FailTimeout(crate::reaper::timeout_error(record));
    }
    if was_waiting_for_input(record) && rerunnable {
        return TriageDecision::Reask { attempt: record.attempt };
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

    fn waiting(status: TaskStatus, answered: bool) -> TaskRecord {
        let mut t = record(status, 0);
        t.input_requests.insert("confirm".into(), serde_json::json!({"method": "elicitation/create"}));
        if answered {
            t.input_responses.insert("confirm".into(), serde_json::json!({"action": "accept"}));
        }
        t
    }

    #[test]
    fn a_task_waiting_for_input_is_asked_again_without_spending_an_attempt() {
        let now = Timestamp::from_secs(10);
        let mut t = waiting(TaskStatus::InputRequired, false);
        assert_eq!(triage(&t, now, true), TriageDecision::Reask { attempt: 1 });
        // Even on its last attempt: waiting is not executing, so it is not poison.
        t.attempt = 3;
        assert_eq!(triage(&t, now, true), TriageDecision::Reask { attempt: 3 });
        assert_eq!(TriageDecision::Reask { attempt: 3 }.resulting_status(), TaskStatus::Working);
        // Re-asked, claimed again and killed before the re-run asked: still waiting.
        let again = waiting(TaskStatus::Working, false);
        assert_eq!(triage(&again, now, true), TriageDecision::Reask { attempt: 1 });
        // A cancel and the deadline still come first.
        t.deadline_at = now;
        assert!(matches!(triage(&t, now, true), TriageDecision::FailTimeout(_)));
        t.cancel_requested = true;
        assert_eq!(triage(&t, now, true), TriageDecision::Cancel);
    }

    #[test]
    fn an_answered_task_was_working_and_spends_an_attempt() {
        let now = Timestamp::from_secs(10);
        let t = waiting(TaskStatus::Working, true);
        assert!(!was_waiting_for_input(&t));
        assert_eq!(triage(&t, now, true), TriageDecision::Resume { next_attempt: 2 });
    }

    #[test]
    fn a_waiting_task_of_a_tool_that_may_not_run_again_fails() {
        // Asking again would re-run what came before the question.
        let t = waiting(TaskStatus::InputRequired, false);
        assert!(matches!(triage(&t, Timestamp::from_secs(10), false), TriageDecision::FailNotRerunnable(_)));
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
