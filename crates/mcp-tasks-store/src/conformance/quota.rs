//! Per-principal quotas: checked atomically with the insert.

use std::sync::Arc;

use mcp_tasks_core::TaskStatus;
use serde_json::json;

use super::support::*;
use crate::error::StoreError;
use crate::params::*;
use crate::store::TaskStore;

/// A task of `principal` created under `quota`.
fn owned(principal: Option<&str>, quota: Quota, n: i64) -> NewTask {
    NewTask {
        principal: principal.map(str::to_owned),
        quota: Some(quota),
        arguments: json!({ "n": n }),
        ..new_task("report", at(n))
    }
}

fn tasks_quota(max: u64) -> Quota {
    Quota { max_tasks: Some(max), max_argument_bytes: None }
}

/// Asserts `result` is `QuotaExceeded` for `principal` on `resource`.
fn assert_exceeded(
    result: Result<Created, StoreError>,
    principal: Option<&str>,
    resource: QuotaResource,
    used: u64,
    limit: u64,
) {
    match result {
        Err(StoreError::QuotaExceeded { principal: p, resource: r, used: u, limit: l }) => assert_eq!(
            (p.as_deref(), r, u, l),
            (principal, resource, used, limit),
            "the error names the principal, the limit and what it holds"
        ),
        other => panic!("expected QuotaExceeded for {principal:?}, got {other:?}"),
    }
}

/// `max_tasks` caps each principal separately (the anonymous principal is
/// one principal), counts retained terminal tasks, never refuses an
/// idempotent replay, and frees a slot when a task is deleted. A refused
/// creation creates nothing.
pub async fn quota_caps_tasks_per_principal(store: &dyn TaskStore) {
    let quota = tasks_quota(2);
    let keyed = NewTask { idempotency_key: Some("k".into()), ..owned(Some("alice"), quota, 1) };
    let first = create(store, keyed.clone()).await;
    create(store, owned(Some("alice"), quota, 2)).await;
    assert_exceeded(store.create(owned(Some("alice"), quota, 3)).await, Some("alice"), QuotaResource::Tasks, 2, 2);
    let replay = store
        .create(NewTask { id: mcp_tasks_core::TaskId::random(), ..keyed })
        .await
        .expect("an idempotent replay at the limit adds nothing and is not refused");
    assert_eq!((replay.created, replay.record.id), (false, first.id.clone()));
    create(store, owned(Some("bob"), quota, 4)).await;
    create(store, owned(None, quota, 5)).await;
    create(store, owned(None, quota, 6)).await;
    assert_exceeded(store.create(owned(None, quota, 7)).await, None, QuotaResource::Tasks, 2, 2);
    assert_eq!(store.list(ListQuery::default()).await.expect("list").len(), 5, "refused creations created nothing");

    // A finished task still counts until its row is deleted (expiry).
    let done = finish(store, &first.id, TaskStatus::Completed, at(10)).await;
    assert_exceeded(store.create(owned(Some("alice"), quota, 8)).await, Some("alice"), QuotaResource::Tasks, 2, 2);
    assert_eq!(apply_one(store, GuardedUpdate::delete(Guard::read(&done))).await, UpdateOutcome::Applied(None));
    create(store, owned(Some("alice"), quota, 9)).await;
}

/// `max_argument_bytes` caps the bytes of stored arguments (their compact
/// JSON text) per principal.
pub async fn quota_caps_argument_bytes(store: &dyn TaskStore) {
    let one = json!({ "pad": "x".repeat(100) });
    let size = argument_bytes(&one);
    let quota = Quota { max_tasks: None, max_argument_bytes: Some(2 * size + size / 2) };
    let sized = |principal: &str| NewTask {
        principal: Some(principal.to_owned()),
        quota: Some(quota),
        arguments: one.clone(),
        ..new_task("report", at(0))
    };
    create(store, sized("alice")).await;
    create(store, sized("alice")).await;
    assert_exceeded(
        store.create(sized("alice")).await,
        Some("alice"),
        QuotaResource::ArgumentBytes,
        2 * size,
        2 * size + size / 2,
    );
    let small = NewTask { arguments: json!({}), ..sized("alice") };
    create(store, small).await;
    create(store, sized("bob")).await;
}

/// 24 concurrent creations by one principal under a quota of 5 tasks:
/// exactly 5 succeed, the rest are refused, and 5 rows exist.
pub async fn concurrent_creates_never_overshoot_a_quota(store: Arc<dyn TaskStore>) {
    let quota = tasks_quota(5);
    let mut handles = Vec::new();
    for n in 0..24 {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move { store.create(owned(Some("alice"), quota, n)).await }));
    }
    let mut created = 0;
    for h in handles {
        match h.await.expect("creator panicked") {
            Ok(c) => {
                assert!(c.created);
                created += 1;
            }
            Err(StoreError::QuotaExceeded { .. }) => {}
            Err(other) => panic!("expected success or QuotaExceeded, got {other}"),
        }
    }
    assert_eq!(created, 5, "exactly the quota's worth of creations succeed");
    assert_eq!(store.list(ListQuery::default()).await.expect("list").len(), 5);
}
