//! Idempotency keys: one call per (principal, key) while the task exists.

use mcp_tasks_core::{TaskId, TaskStatus};
use serde_json::json;

use super::support::*;
use crate::error::StoreError;
use crate::params::*;
use crate::store::TaskStore;

fn keyed(principal: Option<&str>, key: &str, tool: &str, arguments: serde_json::Value) -> NewTask {
    NewTask {
        principal: principal.map(str::to_owned),
        idempotency_key: Some(key.to_owned()),
        arguments,
        ..new_task(tool, at(0))
    }
}

/// The same call under the same key returns the existing task with
/// `created: false`, whatever the order of the argument object's keys; the
/// key is scoped to its principal.
pub async fn same_call_with_same_key_returns_existing_task(store: &dyn TaskStore) {
    let first = create(store, keyed(Some("alice"), "k", "report", json!({ "a": 1, "b": [1, 2] }))).await;
    let retry = keyed(Some("alice"), "k", "report", json!({ "b": [1, 2], "a": 1 }));
    let retry_id = retry.id.clone();
    let again = store.create(retry).await.expect("create with a reused key and the same call");
    assert!(!again.created, "the same call under the same key must report created: false");
    assert_eq!(again.record, first, "the same call under the same key must return the existing task");
    assert_eq!(store.get(&retry_id).await.expect("get"), None, "no second task may be created");

    let bob = store.create(keyed(Some("bob"), "k", "report", json!({ "a": 1, "b": [1, 2] }))).await.expect("create");
    assert!(bob.created, "another principal's key is another slot");
    assert_ne!(bob.record.id, first.id);
    let anonymous = store.create(keyed(None, "k", "report", json!({ "a": 1, "b": [1, 2] }))).await.expect("create");
    assert!(anonymous.created, "the anonymous principal's key is another slot");

    let unkeyed = new_task("report", at(0));
    let unkeyed_twin = NewTask { id: TaskId::random(), ..unkeyed.clone() };
    assert!(store.create(unkeyed).await.expect("create").created);
    assert!(store.create(unkeyed_twin).await.expect("create").created, "without a key every create is a new task");
}

/// A key reused for another tool or other arguments fails with
/// `IdempotencyConflict` naming the key and the task that holds it.
pub async fn other_call_with_same_key_is_a_conflict(store: &dyn TaskStore) {
    let first = create(store, keyed(Some("alice"), "order-42", "report", json!({ "a": 1 }))).await;
    for (tool, arguments) in [("report", json!({ "a": 2 })), ("other_tool", json!({ "a": 1 })), ("report", json!(null))] {
        let attempt = keyed(Some("alice"), "order-42", tool, arguments.clone());
        let attempt_id = attempt.id.clone();
        match store.create(attempt).await {
            Err(e @ StoreError::IdempotencyConflict { .. }) => {
                assert!(e.to_string().contains("order-42"), "the conflict message must name the key: {e}");
                let StoreError::IdempotencyConflict { key, existing } = e else { unreachable!() };
                assert_eq!((key.as_str(), &existing), ("order-42", &first.id));
            }
            other => panic!("key reused for {tool} {arguments}: expected IdempotencyConflict, got {other:?}"),
        }
        assert_eq!(store.get(&attempt_id).await.expect("get"), None, "a conflicting create must create nothing");
    }
    assert_eq!(get(store, &first.id).await, first, "a conflicting create must not touch the holder");
}

/// The key stays bound while the task row exists, terminal or not, and is
/// released when the expiry sweep deletes the row.
pub async fn idempotency_key_is_released_when_the_row_expires(store: &dyn TaskStore) {
    let first = create(store, keyed(Some("alice"), "nightly", "report", json!({ "day": 1 }))).await;
    let done = finish(store, &first.id, TaskStatus::Completed, at(10)).await;
    match store.create(keyed(Some("alice"), "nightly", "report", json!({ "day": 2 }))).await {
        Err(StoreError::IdempotencyConflict { existing, .. }) => assert_eq!(existing, first.id),
        other => panic!("a terminal task still holds its key: expected IdempotencyConflict, got {other:?}"),
    }
    let deleted = apply_one(store, GuardedUpdate::delete(Guard::read(&done))).await;
    assert_eq!(deleted, UpdateOutcome::Applied(None), "deleting a terminal row under a holding guard applies");
    assert_eq!(store.get(&first.id).await.expect("get"), None, "a deleted row is gone");
    let fresh = store.create(keyed(Some("alice"), "nightly", "report", json!({ "day": 2 }))).await.expect("create");
    assert!(fresh.created, "after the row expired the key is free for a new call");
    assert_ne!(fresh.record.id, first.id);
}
