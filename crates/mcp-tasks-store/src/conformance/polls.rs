//! Poll timestamps: monotonic, batched, version-neutral.

use mcp_tasks_core::TaskId;

use super::support::*;
use crate::store::TaskStore;

/// `record_polls` keeps the latest instant per task (within a batch and
/// across batches), ignores unknown ids, and bumps neither `version` nor
/// `updated_at`.
pub async fn record_polls_is_monotonic_and_version_neutral(store: &dyn TaskStore) {
    let a = create(store, new_task("report", at(0))).await;
    let b = create(store, new_task("report", at(0))).await;
    store.record_polls(&[]).await.expect("an empty batch is fine");
    store
        .record_polls(&[(a.id.clone(), at(10)), (b.id.clone(), at(5)), (TaskId::random(), at(7))])
        .await
        .expect("record_polls with an unknown id");
    let a1 = get(store, &a.id).await;
    assert_eq!(a1.last_polled_at, Some(at(10)));
    assert_eq!(get(store, &b.id).await.last_polled_at, Some(at(5)));
    assert_eq!((a1.version, a1.updated_at), (a.version, a.updated_at), "a poll bumps neither version nor updated_at");
    assert_eq!(a1, mcp_tasks_core::TaskRecord { last_polled_at: Some(at(10)), ..a.clone() }, "a poll changes nothing else");

    store.record_polls(&[(a.id.clone(), at(3))]).await.expect("record_polls");
    assert_eq!(get(store, &a.id).await.last_polled_at, Some(at(10)), "an older poll never moves the instant back");
    store.record_polls(&[(a.id.clone(), at(20)), (a.id.clone(), at(15))]).await.expect("record_polls");
    assert_eq!(get(store, &a.id).await.last_polled_at, Some(at(20)), "within a batch the latest instant wins");
    assert_eq!(get(store, &a.id).await.last_seen_at(), at(20));
    assert_eq!(get(store, &a.id).await.version, a.version);
}
