//! Terminal rows are final: never changed, only deleted on expiry.

use mcp_tasks_core::TaskStatus;
use mcp_tasks_core::status::ALL_STATUSES;
use serde_json::json;

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

/// For every terminal status, no change (to any status, or none) applies,
/// whether guarded on the id alone or on the exact version read.
pub async fn terminal_rows_never_change(store: &dyn TaskStore) {
    for terminal in ALL_STATUSES.into_iter().filter(|s| s.is_terminal()) {
        let r = create(store, new_task("report", at(0))).await;
        let done = finish(store, &r.id, terminal, at(10)).await;
        let targets = ALL_STATUSES.into_iter().map(Some).chain([None]);
        for to in targets {
            let late = Change {
                now: at(20),
                status: to,
                status_message: Some(Some("too late".into())),
                result: Some(json!({ "late": true })),
                expires_at: Some(None),
                ..Change::default()
            };
            for guard in [Guard::id(r.id.clone()), Guard::read(&done)] {
                let outcome = apply_one(store, GuardedUpdate::change(guard, late.clone())).await;
                assert_eq!(outcome, UpdateOutcome::Lost, "a {terminal} task must not change (to {to:?})");
            }
        }
        assert_eq!(get(store, &r.id).await, done, "a {terminal} task must read back unchanged");
    }
}

/// A live row is never deleted; a terminal one is.
pub async fn delete_requires_a_terminal_row(store: &dyn TaskStore) {
    for live in [TaskStatus::Working, TaskStatus::InputRequired] {
        let r = create(store, new_task("report", at(0))).await;
        let r = finish(store, &r.id, live, at(1)).await;
        assert_eq!(
            apply_one(store, GuardedUpdate::delete(Guard::read(&r))).await,
            UpdateOutcome::Lost,
            "a {live} task must not be deleted"
        );
        assert_eq!(get(store, &r.id).await, r);
    }
    let r = create(store, new_task("report", at(0))).await;
    finish(store, &r.id, TaskStatus::Cancelled, at(1)).await;
    assert_eq!(apply_one(store, GuardedUpdate::delete(Guard::id(r.id.clone()))).await, UpdateOutcome::Applied(None));
    assert_eq!(store.get(&r.id).await.expect("get"), None);
}
