//! Input de-duplication: each key is asked once, answers are resent until
//! acknowledged, and keys acknowledged before a restart are never asked again.

use std::collections::BTreeMap;

use mcp_tasks_client::InputLedger;
use serde_json::{Value, json};

fn keys(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_key_is_asked_once_across_stale_polls() {
    let mut ledger = InputLedger::default();
    let pending = keys(&["a", "b"]);
    assert_eq!(ledger.to_ask(&pending), keys(&["a", "b"]));
    ledger.answer("a".into(), json!(1));
    ledger.skip("b".into());
    // The same two keys come back on the next poll: nothing to ask.
    assert!(ledger.to_ask(&pending).is_empty());
    assert_eq!(ledger.unsent(), BTreeMap::from([("a".to_owned(), json!(1))]));
    ledger.acknowledge(&keys(&["a"]));
    assert!(ledger.unsent().is_empty());
    assert!(ledger.is_acknowledged("a"));
    // A genuinely new key is asked.
    assert_eq!(ledger.to_ask(&keys(&["a", "b", "c"])), keys(&["c"]));
}

#[test]
fn an_unacknowledged_answer_stays_for_resending_without_asking_again() {
    let mut ledger = InputLedger::default();
    ledger.answer("k".into(), json!({"action": "accept"}));
    // The tasks/update failed: next poll neither asks nor loses the answer.
    assert!(ledger.to_ask(&keys(&["k"])).is_empty());
    assert_eq!(ledger.unsent().get("k"), Some(&json!({"action": "accept"})));
    assert!(!ledger.is_acknowledged("k"));
}

#[test]
fn keys_known_from_the_book_are_never_asked() {
    let mut ledger = InputLedger::with_acknowledged(keys(&["x"]));
    assert_eq!(ledger.to_ask(&keys(&["x", "y"])), keys(&["y"]));
    // A late answer for an acknowledged key is not resent.
    ledger.answer("x".into(), Value::Null);
    assert!(ledger.unsent().is_empty());
}
