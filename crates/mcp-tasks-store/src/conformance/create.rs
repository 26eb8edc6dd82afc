//! Creation and the round trip of every stored field.

use std::collections::BTreeMap;

use mcp_tasks_core::{TaskError, TaskId, TaskStatus, call_fingerprint};
use serde_json::json;

use super::support::*;
use crate::error::StoreError;
use crate::params::*;
use crate::store::TaskStore;

/// A created task reads back with every field as `create` documents it.
pub async fn create_get_round_trip(store: &dyn TaskStore) {
    let arguments = json!({
        "query": "naïve ☃ \"quoted\" \\ back",
        "numbers": [1, 2.5, -3, null, i64::MAX],
        "nested": { "deep": { "deeper": [true, false, {}] } },
    });
    let new = NewTask {
        id: TaskId::random(),
        tool: "report".into(),
        arguments: arguments.clone(),
        principal: Some("alice".into()),
        idempotency_key: Some("key-1".into()),
        trace_parent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
        max_attempts: 5,
        created_at: at(0),
        deadline_at: at(1800),
        run_at: at(10),
        status_message: Some("queued".into()),
        quota: None,
        lease: None,
    };
    let created = store.create(new.clone()).await.expect("create");
    assert!(created.created, "a fresh task must report created: true");
    let r = &created.record;
    assert_eq!(r.id, new.id);
    assert_eq!(r.version, 1, "a new task has version 1");
    assert_eq!(r.tool, "report");
    assert_eq!(r.arguments, arguments);
    assert_eq!(r.principal.as_deref(), Some("alice"));
    assert_eq!(r.status, TaskStatus::Working);
    assert_eq!(r.status_message.as_deref(), Some("queued"));
    assert_eq!(r.attempt, 1);
    assert_eq!(r.max_attempts, 5);
    assert_eq!(r.created_at, at(0));
    assert_eq!(r.updated_at, at(0), "updated_at starts at created_at");
    assert_eq!(r.deadline_at, at(1800));
    assert_eq!(r.run_at, Some(at(10)));
    assert_eq!(r.lease, None);
    assert_eq!(r.last_polled_at, None);
    assert!(!r.cancel_requested);
    assert_eq!(r.terminal_at, None);
    assert_eq!(r.expires_at, None);
    assert_eq!(r.result, None);
    assert_eq!(r.error, None);
    assert!(r.input_requests.is_empty() && r.input_responses.is_empty());
    assert_eq!(r.idempotency_key.as_deref(), Some("key-1"));
    assert_eq!(r.fingerprint, call_fingerprint("report", &arguments));
    assert_eq!(r.trace_parent, new.trace_parent, "the trace context is stored as given");
    assert_eq!(store.get(&new.id).await.expect("get").as_ref(), Some(r), "get must return what create returned");
    assert_eq!(store.get(&TaskId::random()).await.expect("get unknown"), None, "an unknown id reads as None");
}

/// Every field a [`Change`] can set (and clear) reads back exactly, and
/// `record_polls` instants read back too.
pub async fn every_change_field_round_trips(store: &dyn TaskStore) {
    let r = create(store, new_task("report", at(0))).await;
    let requests: BTreeMap<_, _> = [(
        "confirm".to_owned(),
        json!({ "method": "elicitation/create", "params": { "message": "Go on?", "requestedSchema": { "type": "object" } } }),
    )]
    .into();
    let responses: BTreeMap<_, _> =
        [("earlier".to_owned(), json!({ "action": "accept", "content": { "ok": true } }))].into();
    let set_all = Change {
        now: at(20),
        status: Some(TaskStatus::InputRequired),
        status_message: Some(Some("waiting for you".into())),
        attempt: Some(2),
        max_attempts: Some(7),
        run_at: Some(None),
        lease: Some(Some(lease("exec-1", at(80)))),
        cancel_requested: Some(true),
        terminal_at: None,
        expires_at: Some(Some(at(5000))),
        result: None,
        error: None,
        input_requests: Some(requests.clone()),
        input_responses: Some(responses.clone()),
        dead_letter: None,
        attempt_end: None,
    };
    let changed = match apply_one(store, GuardedUpdate::change(Guard::read(&r), set_all)).await {
        UpdateOutcome::Applied(Some(c)) => c,
        other => panic!("change under a holding guard: expected Applied(Some), got {other:?}"),
    };
    assert_eq!(changed.version, 2, "an applied change bumps the version");
    assert_eq!(changed.updated_at, at(20), "an applied change sets updated_at = now");
    assert_eq!(changed.created_at, at(0), "created_at never changes");
    assert_eq!(changed.status, TaskStatus::InputRequired);
    assert_eq!(changed.status_message.as_deref(), Some("waiting for you"));
    assert_eq!((changed.attempt, changed.max_attempts), (2, 7));
    assert_eq!(changed.run_at, None);
    assert_eq!(changed.lease, Some(lease("exec-1", at(80))));
    assert!(changed.cancel_requested);
    assert_eq!(changed.expires_at, Some(at(5000)));
    assert_eq!(changed.input_requests, requests);
    assert_eq!(changed.input_responses, responses);
    assert_eq!(changed.pending_input().count(), 1);
    assert_eq!(get(store, &r.id).await, changed, "get must return the row apply returned");

    let cleared = change(
        store,
        &r.id,
        Change {
            now: at(30),
            status: Some(TaskStatus::Working),
            status_message: Some(None),
            run_at: Some(Some(at(40))),
            lease: Some(None),
            cancel_requested: Some(false),
            expires_at: Some(None),
            ..Change::default()
        },
    )
    .await;
    assert_eq!(cleared.status_message, None, "Some(None) clears the status message");
    assert_eq!(cleared.lease, None, "Some(None) releases the lease");
    assert_eq!(cleared.expires_at, None, "Some(None) clears expires_at");
    assert_eq!(cleared.run_at, Some(at(40)));
    assert_eq!(cleared.input_requests, requests, "fields a change leaves unset stay as they were");
    assert_eq!(cleared.version, 3);
    assert_eq!(get(store, &r.id).await, cleared);

    store.record_polls(&[(r.id.clone(), at(35))]).await.expect("record_polls");
    let result =
        json!({ "content": [{ "type": "text", "text": "done ✓" }], "structuredContent": { "rows": 3 }, "isError": false });
    let done = change(
        store,
        &r.id,
        Change {
            now: at(50),
            status: Some(TaskStatus::Completed),
            terminal_at: Some(at(50)),
            expires_at: Some(Some(at(3650))),
            result: Some(result.clone()),
            ..Change::default()
        },
    )
    .await;
    assert_eq!(done.last_polled_at, Some(at(35)), "record_polls instants are kept");
    assert_eq!((done.terminal_at, done.expires_at), (Some(at(50)), Some(at(3650))));
    assert_eq!(done.result, Some(result));
    assert_eq!(get(store, &r.id).await, done);

    let other = create(store, new_task("report", at(1))).await;
    let error = TaskError {
        code: -32000,
        message: "upstream said no".into(),
        data: Some(json!({ "retryable": false, "status": 503 })),
    };
    let failed = change(
        store,
        &other.id,
        Change {
            now: at(60),
            status: Some(TaskStatus::Failed),
            terminal_at: Some(at(60)),
            error: Some(error.clone()),
            ..Change::default()
        },
    )
    .await;
    assert_eq!(failed.error, Some(error), "a JSON-RPC error round-trips with its data");
    assert_eq!(get(store, &other.id).await, failed);
}

/// Only a change a client can see moves `updated_at` (the wire's
/// `lastUpdatedAt`): a lease renewal, a cancel flag, a due instant, or no
/// field at all bump the version and leave it.
pub async fn only_visible_changes_move_updated_at(store: &dyn TaskStore) {
    let r = create(store, new_task("report", at(0))).await;
    let renewed =
        change(store, &r.id, Change { now: at(10), lease: Some(Some(lease("exec-1", at(40)))), ..Change::default() }).await;
    assert_eq!(renewed.lease, Some(lease("exec-1", at(40))));
    assert_eq!(
        (renewed.version, renewed.updated_at),
        (r.version + 1, r.updated_at),
        "a lease renewal bumps the version and leaves updated_at"
    );
    let flagged = change(
        store,
        &r.id,
        Change { now: at(20), cancel_requested: Some(true), run_at: Some(Some(at(25))), ..Change::default() },
    )
    .await;
    assert_eq!(flagged.updated_at, r.updated_at, "a cancel flag and a due instant are not visible");
    let empty = change(store, &r.id, Change { now: at(30), ..Change::default() }).await;
    assert_eq!(
        (empty.version, empty.updated_at),
        (r.version + 3, r.updated_at),
        "an empty change applies, bumps the version and leaves updated_at"
    );
    let said =
        change(store, &r.id, Change { now: at(40), status_message: Some(Some("halfway".to_owned())), ..Change::default() })
            .await;
    assert_eq!(said.updated_at, at(40), "a new status message moves updated_at");
    assert_eq!(get(store, &r.id).await, said);
}

/// Creating a second task with an id in use fails with `DuplicateId` and
/// leaves the first untouched.
pub async fn duplicate_id_is_rejected(store: &dyn TaskStore) {
    let first = create(store, new_task("report", at(0))).await;
    let mut again = new_task("other_tool", at(5));
    again.id = first.id.clone();
    match store.create(again).await {
        Err(StoreError::DuplicateId(id)) => assert_eq!(id, first.id),
        other => panic!("a reused id must fail with DuplicateId, got {other:?}"),
    }
    assert_eq!(get(store, &first.id).await, first, "a rejected create must not touch the existing task");
}

/// A creation given a lease (dispatch at creation) stores the task already
/// leased, exactly as answered: no claim takes it, while a queued task is
/// still claimed; an idempotent join given a lease leaves the existing
/// task's lease as it was.
pub async fn a_dispatched_creation_is_born_leased(store: &dyn TaskStore) {
    let queued = create(store, new_task("report", at(0))).await;
    let lease = mcp_tasks_core::Lease { owner: "exec-a/7".into(), expires_at: at(61) };
    let dispatched = create(store, NewTask { lease: Some(lease.clone()), ..new_task("report", at(1)) }).await;
    assert_eq!(dispatched.lease.as_ref(), Some(&lease), "the creation answers with the lease it wrote");
    assert_eq!((dispatched.version, dispatched.attempt, dispatched.status), (1, 1, TaskStatus::Working));
    assert_eq!(get(store, &dispatched.id).await, dispatched, "the stored row is what the creation answered");
    let claimed = store.claim(claim_params("exec-b/1", at(2), 10)).await.expect("claim");
    assert_eq!(ids(&claimed), vec![queued.id.clone()], "only the queued task is claimable");

    let keyed = NewTask { idempotency_key: Some("dispatch-key".into()), ..new_task("report", at(3)) };
    let first = create(store, keyed.clone()).await;
    let joined =
        store.create(NewTask { id: TaskId::random(), lease: Some(lease), ..keyed }).await.expect("the same call joins");
    assert!(!joined.created, "the key names the first task");
    assert_eq!(joined.record, first, "a join writes no lease");
    assert_eq!(get(store, &first.id).await.lease, None);
}
