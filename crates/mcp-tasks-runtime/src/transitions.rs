//! Decisions made in `mcp-tasks-core`, turned into store [`Change`]s.
//!
//! Nothing here decides policy: the classifier, retry policy, reaper and
//! triage decide; this module only says which fields each decision writes.
//! Every terminal change also drops the lease and the due instant, so a
//! terminal row never looks claimable or leased, and sets a status message
//! that describes the end (never the last progress or retry message).

use std::time::Duration;

use mcp_tasks_core::reaper::ReaperAction;
use mcp_tasks_core::{
    Classifier, Failure, FailureClass, RandomSource, RetentionPolicy, RetryDecision, RetryPolicy, TaskError, TaskRecord,
    TaskStatus, Timestamp, TriageDecision,
};
use mcp_tasks_store::{AttemptEnd, AttemptOutcome, Change, NewDeadLetter, Update};
use serde_json::{Value, json};

use crate::tool::{FailureKind, ToolFailure};

/// A change that ends the task in `status` at `now`, saying how in `message`.
fn terminal(now: Timestamp, retention: &RetentionPolicy, status: TaskStatus, message: String) -> Change {
    Change {
        now,
        status: Some(status),
        status_message: Some(Some(message)),
        terminal_at: Some(now),
        expires_at: Some(Some(retention.expires_at(status, now))),
        lease: Some(None),
        run_at: Some(None),
        ..Change::default()
    }
}

/// The end of `record`'s current attempt: its number and lease holder as
/// read (the start is known only to the executor that claimed it).
pub(crate) fn attempt_end(
    record: &TaskRecord,
    outcome: AttemptOutcome,
    class: Option<FailureClass>,
    error: Option<TaskError>,
    message: Option<String>,
) -> AttemptEnd {
    AttemptEnd {
        attempt: record.attempt,
        started_at: None,
        owner: record.lease.as_ref().map(|l| l.owner.clone()),
        outcome,
        class,
        error,
        message,
    }
}

/// `change`, recording `end` as the attempt it ends.
pub(crate) fn ending(change: Change, end: AttemptEnd) -> Change {
    Change { attempt_end: Some(end), ..change }
}

/// The end a terminal or requeuing `change` records for `record`'s attempt:
/// its outcome named by the caller, its error and message taken from the change.
fn end_from(record: &TaskRecord, change: &Change, outcome: AttemptOutcome, class: Option<FailureClass>) -> AttemptEnd {
    let message = change.status_message.clone().flatten();
    attempt_end(record, outcome, class, change.error.clone(), message)
}

/// The status message of a completed task.
pub(crate) const COMPLETED: &str = "completed";

/// The task completed with `result`.
pub(crate) fn completed(now: Timestamp, retention: &RetentionPolicy, result: Value) -> Change {
    Change { result: Some(result), ..terminal(now, retention, TaskStatus::Completed, COMPLETED.to_owned()) }
}

/// The task failed with `error`, dead-lettered in the same write when `dead_letter` is given.
pub(crate) fn failed(
    now: Timestamp,
    retention: &RetentionPolicy,
    error: TaskError,
    dead_letter: Option<NewDeadLetter>,
) -> Change {
    let message = error.message.clone();
    Change { error: Some(error), dead_letter, ..terminal(now, retention, TaskStatus::Failed, message) }
}

/// The task was cancelled, for the reason in `message`.
pub(crate) fn cancelled(now: Timestamp, retention: &RetentionPolicy, message: impl Into<String>) -> Change {
    terminal(now, retention, TaskStatus::Cancelled, message.into())
}

/// The status message of a task cancelled at its client's request.
pub(crate) const CANCELLED_BY_CLIENT: &str = "cancelled at the client's request";

/// The task goes back to the queue: `working`, unleased, due at `run_at`.
pub(crate) fn requeued(now: Timestamp, run_at: Timestamp, attempt: u32, message: String) -> Change {
    Change {
        now,
        status: Some(TaskStatus::Working),
        attempt: Some(attempt),
        run_at: Some(Some(run_at)),
        lease: Some(None),
        status_message: Some(Some(message)),
        ..Change::default()
    }
}

/// The lease is handed back at shutdown without consuming an attempt, due
/// at once so the next start picks the task up immediately.
pub(crate) fn released_at_shutdown(now: Timestamp, attempt: u32, max: u32) -> Change {
    requeued(now, now, attempt, format!("interrupted by a server shutdown; will resume (attempt {attempt} of {max})"))
}

/// How one attempt ended, as the executor writes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Settlement {
    /// Completed with a result.
    Completed,
    /// Scheduled to run again after `delay` as `attempt`.
    Retry {
        /// The next attempt.
        attempt: u32,
        /// The backoff.
        delay: Duration,
    },
    /// Re-run after `delay` at the tool's request, same attempt.
    Snoozed {
        /// The wait.
        delay: Duration,
    },
    /// Failed for good.
    Failed {
        /// Why: transient-turned-poison, permanent, or a protocol error (`None`).
        class: Option<FailureClass>,
    },
}

/// What decides an attempt's outcome: the classifier, the retry policy, and
/// the retention of a task that ends.
#[derive(Debug, Clone)]
pub(crate) struct OutcomeRules {
    pub(crate) classifier: Classifier,
    pub(crate) retry: RetryPolicy,
    pub(crate) retention: RetentionPolicy,
}

/// Turns the outcome of attempt `attempt` (of `max`) into the change to
/// write: classifier and retry policy decide, this writes their decision.
pub(crate) fn settle(
    outcome: Result<Value, ToolFailure>,
    attempt: u32,
    max: u32,
    now: Timestamp,
    rules: &OutcomeRules,
    rng: &mut dyn RandomSource,
) -> (Settlement, Change) {
    let (retry, retention, classifier) = (&rules.retry, &rules.retention, &rules.classifier);
    // The executor fills in the holder and the start it knows.
    let end = |outcome, class, error: Option<TaskError>| AttemptEnd {
        attempt,
        started_at: None,
        owner: None,
        outcome,
        class,
        error,
        message: None,
    };
    let failure = match outcome {
        Ok(result) => {
            let change = completed(now, retention, result);
            return (Settlement::Completed, ending(change, end(AttemptOutcome::Completed, None, None)));
        }
        Err(f) => f,
    };
    let class = match failure.kind {
        FailureKind::Protocol(error) => {
            let change = failed(now, retention, error.clone(), None);
            return (Settlement::Failed { class: None }, ending(change, end(AttemptOutcome::Failed, None, Some(error))));
        }
        FailureKind::RetryAfter(delay) => {
            let message = format!(
                "waiting {} ms before running again, as the tool asked (attempt {attempt} of {max})",
                delay.as_millis()
            );
            return (Settlement::Snoozed { delay }, requeued(now, now.plus(delay), attempt, message));
        }
        FailureKind::Classify => {
            classifier.classify(&Failure { message: &failure.message, code: failure.code }, attempt, max)
        }
        FailureKind::Transient if attempt >= max => FailureClass::Poison,
        FailureKind::Transient => FailureClass::Transient,
        FailureKind::Permanent => FailureClass::Permanent,
    };
    // The task's own ceiling governs (a requeued task carries the policy's at requeue time).
    let retry = RetryPolicy { max_attempts: max, ..retry.clone() };
    match retry.decide(class, attempt, rng) {
        RetryDecision::Retry { next_attempt, delay } => {
            let message = format!("retrying after transient error (attempt {next_attempt} of {max}): {}", failure.message);
            let change = requeued(now, now.plus(delay), next_attempt, message);
            let error = failure_error(&failure, FailureClass::Transient, attempt);
            let end = end(AttemptOutcome::Failed, Some(FailureClass::Transient), Some(error));
            (Settlement::Retry { attempt: next_attempt, delay }, ending(change, end))
        }
        RetryDecision::GiveUp { class } => {
            let (error, letter) = give_up(&failure, class, attempt, max, now);
            let end = end(AttemptOutcome::Failed, Some(class), Some(error.clone()));
            (Settlement::Failed { class: Some(class) }, ending(failed(now, retention, error, letter), end))
        }
    }
}

/// The error (and, for poison, the dead letter) of a failure that is not retried.
fn give_up(
    failure: &ToolFailure,
    class: FailureClass,
    attempt: u32,
    max: u32,
    now: Timestamp,
) -> (TaskError, Option<NewDeadLetter>) {
    let error = failure_error(failure, class, attempt);
    let letter = (class == FailureClass::Poison).then(|| NewDeadLetter {
        reason: format!("poison: transient failures exhausted all {max} attempts"),
        error: error.clone(),
        dead_at: now,
    });
    (error, letter)
}

/// A failure as the error an attempt (and a task that gives up) records.
fn failure_error(failure: &ToolFailure, class: FailureClass, attempt: u32) -> TaskError {
    let mut data = json!({"class": class.to_string(), "attempts": attempt});
    if let Some(code) = failure.code {
        data["code"] = json!(code);
    }
    TaskError::internal(failure.message.clone()).with_data(data)
}

/// The store update for a reaper decision on `record` (a live task's end
/// also ends its attempt).
pub(crate) fn reaper_update(
    action: ReaperAction,
    record: &TaskRecord,
    now: Timestamp,
    retention: &RetentionPolicy,
) -> Update {
    let (change, outcome) = match action {
        ReaperAction::FailTimeout(error) => (failed(now, retention, error, None), AttemptOutcome::TimedOut),
        ReaperAction::CancelOrphan(message) => (cancelled(now, retention, message), AttemptOutcome::Cancelled),
        ReaperAction::FinishCancel => (cancelled(now, retention, CANCELLED_BY_CLIENT), AttemptOutcome::Cancelled),
        ReaperAction::Delete => return Update::Delete,
    };
    let end = end_from(record, &change, outcome, None);
    Update::Change(Box::new(ending(change, end)))
}

/// The change for a triage decision on `record`.
pub(crate) fn triage_change(
    decision: TriageDecision,
    record: &TaskRecord,
    now: Timestamp,
    retention: &RetentionPolicy,
) -> Change {
    let end = |change: Change, outcome, class| {
        let end = end_from(record, &change, outcome, class);
        ending(change, end)
    };
    match decision {
        TriageDecision::Cancel => end(cancelled(now, retention, CANCELLED_BY_CLIENT), AttemptOutcome::Cancelled, None),
        TriageDecision::FailTimeout(error) => end(failed(now, retention, error, None), AttemptOutcome::TimedOut, None),
        TriageDecision::FailNotRerunnable(error) => {
            end(failed(now, retention, error, None), AttemptOutcome::LeaseLapsed, None)
        }
        TriageDecision::Poison(error) => {
            let letter = NewDeadLetter {
                reason: format!(
                    "poison: the executor died on attempt {} of {} (a crash counts as an attempt)",
                    record.attempt, record.max_attempts
                ),
                error: error.clone(),
                dead_at: now,
            };
            end(failed(now, retention, error, Some(letter)), AttemptOutcome::LeaseLapsed, Some(FailureClass::Poison))
        }
        TriageDecision::Reask { attempt } => {
            let pending: Vec<&str> = record.pending_input().map(|(k, _)| k.as_str()).collect();
            requeued(
                now,
                now,
                attempt,
                format!(
                    "its executor stopped while it waited for input ({}); asking again (attempt {attempt} of {}, unspent)",
                    pending.join(", "),
                    record.max_attempts
                ),
            )
        }
        TriageDecision::Resume { next_attempt } => {
            let change = requeued(
                now,
                now,
                next_attempt,
                format!("resumed after its executor stopped (attempt {next_attempt} of {})", record.max_attempts),
            );
            let message = Some("its executor stopped holding the lease; the task resumed".to_owned());
            ending(change, attempt_end(record, AttemptOutcome::LeaseLapsed, None, None, message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tasks_core::random::Scripted;

    fn run(outcome: Result<Value, ToolFailure>, attempt: u32) -> (Settlement, Change) {
        let policy = mcp_tasks_core::Policy::default();
        let mut rng = Scripted::new(vec![0.5]);
        let rules = OutcomeRules { classifier: Classifier::default(), retry: policy.retry, retention: policy.retention };
        settle(outcome, attempt, 3, Timestamp::from_secs(100), &rules, &mut rng)
    }

    #[test]
    fn success_completes_with_retention() {
        let (s, c) = run(Ok(json!({"ok": true})), 1);
        assert_eq!(s, Settlement::Completed);
        assert_eq!(c.status, Some(TaskStatus::Completed));
        assert_eq!(c.expires_at, Some(Some(Timestamp::from_secs(3700))));
        assert_eq!(c.lease, Some(None));
        assert_eq!(c.status_message, Some(Some(COMPLETED.to_owned())), "the end replaces any progress message");
    }

    #[test]
    fn transient_retries_with_jittered_delay_and_a_message() {
        let (s, c) = run(Err(ToolFailure::new("upstream timeout")), 1);
        // Cap after attempt 1 is 500 ms; the scripted draw is 0.5.
        assert_eq!(s, Settlement::Retry { attempt: 2, delay: Duration::from_millis(250) });
        assert_eq!(c.run_at, Some(Some(Timestamp::from_millis(100_250))));
        assert_eq!(c.attempt, Some(2));
        let msg = c.status_message.unwrap().unwrap();
        assert!(msg.starts_with("retrying after transient error (attempt 2 of 3): upstream timeout"), "{msg}");
    }

    #[test]
    fn transient_on_the_last_attempt_is_poison_and_dead_lettered() {
        let (s, c) = run(Err(ToolFailure::transient("flaky")), 3);
        assert_eq!(s, Settlement::Failed { class: Some(FailureClass::Poison) });
        assert_eq!(c.status, Some(TaskStatus::Failed));
        assert!(c.dead_letter.is_some());
        assert_eq!(c.error.unwrap().data.unwrap()["class"], "poison");
    }

    #[test]
    fn unknown_errors_are_permanent_and_not_dead_lettered() {
        let (s, c) = run(Err(ToolFailure::new("E_BADSTATE")), 1);
        assert_eq!(s, Settlement::Failed { class: Some(FailureClass::Permanent) });
        assert!(c.dead_letter.is_none());
        let e = c.error.unwrap();
        assert_eq!((e.code, e.message.as_str()), (-32603, "E_BADSTATE"));
    }

    #[test]
    fn retry_after_keeps_the_attempt() {
        let (s, c) = run(Err(ToolFailure::retry_after(Duration::from_secs(5))), 2);
        assert_eq!(s, Settlement::Snoozed { delay: Duration::from_secs(5) });
        assert_eq!(c.attempt, Some(2));
        assert_eq!(c.run_at, Some(Some(Timestamp::from_secs(105))));
    }

    #[test]
    fn each_settlement_ends_its_attempt_except_a_snooze() {
        let end = |outcome, attempt| run(outcome, attempt).1.attempt_end.map(|e| (e.attempt, e.outcome, e.class));
        assert_eq!(end(Ok(json!({})), 2), Some((2, AttemptOutcome::Completed, None)));
        let transient = Some((1, AttemptOutcome::Failed, Some(FailureClass::Transient)));
        assert_eq!(end(Err(ToolFailure::new("upstream timeout")), 1), transient, "a retry ends attempt 1");
        let poison = Some((3, AttemptOutcome::Failed, Some(FailureClass::Poison)));
        assert_eq!(end(Err(ToolFailure::transient("flaky")), 3), poison);
        assert_eq!(end(Err(ToolFailure::retry_after(Duration::from_secs(5))), 2), None, "a snooze is the same attempt");
        let (_, c) = run(Err(ToolFailure::new("E_BADSTATE")), 1);
        let recorded = c.attempt_end.and_then(|e| e.error).map(|e| e.message);
        assert_eq!(recorded.as_deref(), Some("E_BADSTATE"), "the attempt keeps the error");
    }

    #[test]
    fn protocol_errors_are_written_verbatim() {
        let err = TaskError { code: -32602, message: "bad".into(), data: Some(json!({"x": 1})) };
        let (_, c) = run(Err(ToolFailure::protocol(err.clone())), 1);
        assert_eq!(c.error, Some(err));
    }
}
