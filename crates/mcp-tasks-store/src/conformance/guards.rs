//! Guarded updates: a compare-and-set on every field the guard sets.

use mcp_tasks_core::{TaskId, TaskStatus};

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

fn message(now_secs: i64) -> Change {
    Change { now: at(now_secs), status_message: Some(Some(format!("at {now_secs}"))), ..Change::default() }
}

/// Each guard field that does not match the row makes the update lose and
/// change nothing; all of them matching together let it apply.
pub async fn each_guard_field_must_hold(store: &dyn TaskStore) {
    let created = create(store, new_task("report", at(0))).await;
    let claimed = store.claim(claim_params("exec-A", at(1), 1)).await.expect("claim");
    assert_eq!(ids(&claimed), vec![created.id.clone()]);
    store.record_polls(&[(created.id.clone(), at(5))]).await.expect("record_polls");
    let row = get(store, &created.id).await;
    let id = row.id.clone();

    let failing: Vec<(&str, Guard)> = vec![
        ("version", Guard { version: Some(row.version + 1), ..Guard::id(id.clone()) }),
        ("older version", Guard { version: Some(row.version - 1), ..Guard::id(id.clone()) }),
        ("status", Guard { status: Some(TaskStatus::InputRequired), ..Guard::id(id.clone()) }),
        ("attempt", Guard { attempt: Some(2), ..Guard::id(id.clone()) }),
        ("lease_owner", Guard { lease_owner: Some("exec-B".into()), ..Guard::id(id.clone()) }),
        ("cancel_requested", Guard { cancel_requested: Some(true), ..Guard::id(id.clone()) }),
        ("last_seen_at_or_before", Guard { last_seen_at_or_before: Some(at(4)), ..Guard::id(id.clone()) }),
    ];
    for (field, guard) in failing {
        let outcome = apply_one(store, GuardedUpdate::change(guard, message(10))).await;
        assert_eq!(outcome, UpdateOutcome::Lost, "a change whose {field} guard does not hold must lose");
        assert_eq!(get(store, &id).await, row, "a lost change ({field}) must change nothing");
    }

    let all = Guard {
        id: id.clone(),
        version: Some(row.version),
        status: Some(TaskStatus::Working),
        attempt: Some(1),
        lease_owner: Some("exec-A".into()),
        cancel_requested: Some(false),
        last_seen_at_or_before: Some(at(5)),
    };
    match apply_one(store, GuardedUpdate::change(all, message(11))).await {
        UpdateOutcome::Applied(Some(r)) => {
            assert_eq!(r.status_message.as_deref(), Some("at 11"));
            assert_eq!(r.version, row.version + 1);
        }
        other => panic!("a change whose every guard holds must apply, got {other:?}"),
    }

    let unleased = create(store, new_task("report", at(2))).await;
    let outcome = apply_one(
        store,
        GuardedUpdate::change(Guard { lease_owner: Some("exec-A".into()), ..Guard::id(unleased.id.clone()) }, message(12)),
    )
    .await;
    assert_eq!(outcome, UpdateOutcome::Lost, "a lease_owner guard on an unleased row must lose");
    let never_polled = Guard { last_seen_at_or_before: Some(at(1)), ..Guard::id(unleased.id.clone()) };
    assert_eq!(
        apply_one(store, GuardedUpdate::change(never_polled, message(13))).await,
        UpdateOutcome::Lost,
        "a row never polled is last seen at its creation (at 2 > at 1)"
    );
    let at_creation = Guard { last_seen_at_or_before: Some(at(2)), ..Guard::id(unleased.id.clone()) };
    assert!(apply_one(store, GuardedUpdate::change(at_creation, message(14))).await.applied());
}

/// An update guarded on a version read before another change never applies.
pub async fn stale_version_never_applies(store: &dyn TaskStore) {
    let read = create(store, new_task("report", at(0))).await;
    let first = apply_one(store, GuardedUpdate::change(Guard::read(&read), message(1))).await;
    let UpdateOutcome::Applied(Some(after)) = first else { panic!("first change must apply, got {first:?}") };
    for status in [None, Some(TaskStatus::Failed), Some(TaskStatus::Working)] {
        let stale = Change { status, ..message(2) };
        let outcome = apply_one(store, GuardedUpdate::change(Guard::read(&read), stale)).await;
        assert_eq!(outcome, UpdateOutcome::Lost, "a change on a stale version must lose");
    }
    assert_eq!(
        apply_one(store, GuardedUpdate::delete(Guard::read(&read))).await,
        UpdateOutcome::Lost,
        "a delete on a stale version must lose"
    );
    assert_eq!(get(store, &read.id).await, after, "stale updates must change nothing");
}

/// Updates of a task that does not exist report `NotFound`.
pub async fn missing_task_is_not_found(store: &dyn TaskStore) {
    let id = TaskId::random();
    assert_eq!(apply_one(store, GuardedUpdate::change(Guard::id(id.clone()), message(1))).await, UpdateOutcome::NotFound);
    assert_eq!(apply_one(store, GuardedUpdate::delete(Guard::id(id.clone()))).await, UpdateOutcome::NotFound);
    assert_eq!(store.get(&id).await.expect("get"), None, "a change of a missing task must not create it");
}

/// One `apply` call applies its updates in order, each seeing the ones before.
pub async fn batch_applies_in_order(store: &dyn TaskStore) {
    let r = create(store, new_task("report", at(0))).await;
    let v1 = Guard::read(&r);
    let v2 = Guard { version: Some(r.version + 1), ..Guard::id(r.id.clone()) };
    let outcomes = store
        .apply(vec![
            GuardedUpdate::change(v1.clone(), message(1)),
            GuardedUpdate::change(v2, message(2)),
            GuardedUpdate::change(v1, message(3)),
            GuardedUpdate::change(Guard::id(TaskId::random()), message(4)),
        ])
        .await
        .expect("apply");
    let kinds: Vec<_> = outcomes
        .iter()
        .map(|o| match o {
            UpdateOutcome::Applied(_) => "applied",
            UpdateOutcome::Lost => "lost",
            UpdateOutcome::NotFound => "not found",
        })
        .collect();
    assert_eq!(kinds, ["applied", "applied", "lost", "not found"]);
    let UpdateOutcome::Applied(Some(second)) = &outcomes[1] else { unreachable!() };
    assert_eq!(second.version, r.version + 2);
    assert_eq!(second.status_message.as_deref(), Some("at 2"));
    assert_eq!(&get(store, &r.id).await, second, "the batch's last applied change is what is stored");
}
