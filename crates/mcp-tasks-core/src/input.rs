//! Durable input requests and their answers (MRTR `inputRequests` /
//! `inputResponses`): which answers a client's `tasks/update` adds, and what
//! a handler asking a question stores or already has. Pure functions of the
//! record; the runtime writes what they return as a compare-and-set.

use serde_json::Value;

use crate::task::{InputRequests, InputResponses, TaskRecord};

/// The answers in `responses` that `record` would take: keys it asked and has
/// no answer for yet, on a task that is not terminal. Others are ignored (a
/// late or repeated answer is not an error).
///
/// ```
/// use std::collections::BTreeMap;
/// use mcp_tasks_core::input::new_answers;
/// use mcp_tasks_core::{TaskId, TaskRecord, Timestamp};
/// use serde_json::json;
///
/// let mut task = TaskRecord::queued(TaskId::from("t"), "deploy", json!({}), Timestamp::from_secs(0), Timestamp::from_secs(60), 3);
/// task.input_requests.insert("confirm".into(), json!({"method": "elicitation/create"}));
/// let sent = BTreeMap::from([("confirm".to_owned(), json!({"action": "accept"})), ("other".to_owned(), json!(1))]);
/// let keys: Vec<&str> = new_answers(&task, &sent).map(|(k, _, _)| k.as_str()).collect();
/// assert_eq!(keys, ["confirm"]);
/// ```
pub fn new_answers<'a>(
    record: &'a TaskRecord,
    responses: &'a InputResponses,
) -> impl Iterator<Item = (&'a String, &'a Value, &'a Value)> + 'a {
    let live = !record.status.is_terminal();
    responses.iter().filter(move |_| live).filter_map(move |(key, answer)| {
        let request = record.input_requests.get(key)?;
        (!record.input_responses.contains_key(key)).then_some((key, request, answer))
    })
}

/// The task's answers with the new ones of `responses` added, or `None` when
/// nothing new applies (unknown or already answered keys, or a terminal
/// task): then nothing is written. A stored answer is never replaced.
pub fn merge_answers(record: &TaskRecord, responses: &InputResponses) -> Option<InputResponses> {
    let mut merged = record.input_responses.clone();
    let mut added = false;
    for (key, _, answer) in new_answers(record, responses) {
        merged.insert(key.clone(), answer.clone());
        added = true;
    }
    added.then_some(merged)
}

/// The answers to every key of `asked`, if all have one.
pub fn answers_to(record: &TaskRecord, asked: &InputRequests) -> Option<InputResponses> {
    asked.keys().map(|k| record.input_responses.get(k).map(|v| (k.clone(), v.clone()))).collect()
}

/// What a handler asking `asked` must write to `record`.
#[derive(Debug, Clone, PartialEq)]
pub enum AskDecision {
    /// Every key is answered already (say, before a restart): go on with these.
    Answered(InputResponses),
    /// The requests are stored and the task shows `input_required`: wait.
    Stored,
    /// Store these requests (a key already stored keeps its first request)
    /// and show `input_required`, saying which keys are pending.
    Store {
        /// Every request of the task, the new ones added.
        requests: InputRequests,
        /// The asked keys still without an answer, in order.
        pending: Vec<String>,
    },
}

/// Decides what asking `asked` does to `record`.
pub fn ask(record: &TaskRecord, asked: &InputRequests) -> AskDecision {
    if let Some(answers) = answers_to(record, asked) {
        return AskDecision::Answered(answers);
    }
    let mut requests = record.input_requests.clone();
    for (k, v) in asked {
        requests.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if requests == record.input_requests && record.status == crate::TaskStatus::InputRequired {
        return AskDecision::Stored;
    }
    let pending = asked.keys().filter(|k| !record.input_responses.contains_key(*k)).cloned().collect();
    AskDecision::Store { requests, pending }
}

/// Whether a handler whose questions are all answered must set the task
/// `working` again: not while other requests of the task are pending (a
/// parallel question of the same handler), nor if it already is.
pub fn resume_after_answers(record: &TaskRecord) -> bool {
    record.pending_input().next().is_none() && record.status != crate::TaskStatus::Working
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{ALL_STATUSES, TaskStatus};
    use crate::testing::record;
    use proptest::prelude::*;
    use serde_json::json;

    fn keys() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(str::to_owned), 0..4)
    }

    proptest! {
        #[test]
        fn merging_only_adds_answers_to_open_questions(
            status in prop::sample::select(ALL_STATUSES.to_vec()),
            asked in keys(), answered in keys(), sent in keys(),
        ) {
            let mut t = record(status, 0);
            for k in &asked { t.input_requests.insert(k.clone(), json!({"q": k})); }
            for k in &answered { t.input_responses.insert(k.clone(), json!("old")); }
            let sent: InputResponses = sent.iter().map(|k| (k.clone(), json!("new"))).collect();
            match merge_answers(&t, &sent) {
                None => prop_assert!(status.is_terminal()
                    || sent.keys().all(|k| !t.input_requests.contains_key(k) || t.input_responses.contains_key(k))),
                Some(merged) => {
                    prop_assert!(!status.is_terminal());
                    // Nothing stored is lost or replaced.
                    for (k, v) in &t.input_responses { prop_assert_eq!(merged.get(k), Some(v)); }
                    // Every added key was asked, unanswered, and sent.
                    for k in merged.keys().filter(|k| !t.input_responses.contains_key(*k)) {
                        prop_assert!(t.input_requests.contains_key(k) && sent.contains_key(k));
                    }
                    prop_assert!(merged.len() > t.input_responses.len());
                }
            }
        }

        #[test]
        fn asking_keeps_the_first_request_of_a_key(asked in keys(), stored in keys()) {
            let mut t = record(TaskStatus::Working, 0);
            for k in &stored { t.input_requests.insert(k.clone(), json!("first")); }
            let asked: InputRequests = asked.iter().map(|k| (k.clone(), json!("second"))).collect();
            if let AskDecision::Store { requests, pending } = ask(&t, &asked) {
                for k in &stored { prop_assert_eq!(&requests[k], &json!("first")); }
                prop_assert_eq!(pending, asked.keys().cloned().collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn asking_again_what_was_answered_returns_the_answers() {
        let mut t = record(TaskStatus::Working, 0);
        let asked = InputRequests::from([("confirm".to_owned(), json!({"method": "elicitation/create"}))]);
        assert!(matches!(ask(&t, &asked), AskDecision::Store { .. }));
        t.input_requests = asked.clone();
        t.status = TaskStatus::InputRequired;
        assert_eq!(ask(&t, &asked), AskDecision::Stored);
        assert!(!resume_after_answers(&t), "the question is still open");
        t.input_responses.insert("confirm".into(), json!({"action": "accept"}));
        assert_eq!(ask(&t, &asked), AskDecision::Answered(t.input_responses.clone()));
        assert!(resume_after_answers(&t));
        t.status = TaskStatus::Working;
        assert!(!resume_after_answers(&t), "already working");
    }
}
