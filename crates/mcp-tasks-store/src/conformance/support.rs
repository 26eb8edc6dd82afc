//! Builders the conformance tests (and backends' own tests) share.

use std::time::Duration;

use mcp_tasks_core::{Lease, TaskError, TaskId, TaskRecord, TaskStatus, Timestamp};
use serde_json::json;

use crate::params::*;
use crate::store::TaskStore;

/// The instant every test's timeline starts at.
pub const T0: Timestamp = Timestamp::from_secs(1_750_000_000);

/// `secs` seconds after [`T0`].
pub fn at(secs: i64) -> Timestamp {
    T0.plus(Duration::from_secs(secs.max(0) as u64))
}

/// A task of `tool` created (and due) at `created`: no principal or key,
/// 3 attempts, a 1800 s deadline, arguments naming the tool.
pub fn new_task(tool: &str, created: Timestamp) -> NewTask {
    NewTask {
        id: TaskId::minted_at(created),
        tool: tool.to_owned(),
        arguments: json!({ "for": tool }),
        principal: None,
        idempotency_key: None,
        trace_parent: None,
        max_attempts: 3,
        created_at: created,
        deadline_at: created.plus(Duration::from_secs(1800)),
        run_at: created,
        status_message: None,
        quota: None,
        lease: None,
    }
}

/// Creates `new`, which must be a fresh task, and returns its record.
pub async fn create(store: &dyn TaskStore, new: NewTask) -> TaskRecord {
    let id = new.id.clone();
    let created = store.create(new).await.unwrap_or_else(|e| panic!("create {id}: {e}"));
    assert!(created.created, "create {id}: expected a new task, got an existing one");
    created.record
}

/// Reads a task that must exist.
pub async fn get(store: &dyn TaskStore, id: &TaskId) -> TaskRecord {
    store.get(id).await.unwrap_or_else(|e| panic!("get {id}: {e}")).unwrap_or_else(|| panic!("get {id}: task missing"))
}

/// Applies one guarded update and returns its outcome.
pub async fn apply_one(store: &dyn TaskStore, update: GuardedUpdate) -> UpdateOutcome {
    let mut outcomes = store.apply(vec![update]).await.unwrap_or_else(|e| panic!("apply: {e}"));
    assert_eq!(outcomes.len(), 1, "apply returned {} outcomes for one update", outcomes.len());
    outcomes.remove(0)
}

/// Applies `change` to `id` guarded on nothing but the id; it must apply.
pub async fn change(store: &dyn TaskStore, id: &TaskId, change: Change) -> TaskRecord {
    match apply_one(store, GuardedUpdate::change(Guard::id(id.clone()), change)).await {
        UpdateOutcome::Applied(Some(record)) => record,
        other => panic!("change of {id}: expected Applied(Some), got {other:?}"),
    }
}

/// Moves a live task to `status` at `now` the way the runtime would: a
/// completed task gets a result, a failed one an error, every terminal one
/// `terminal_at = now`, `expires_at = now + 1 h` and no lease.
pub async fn finish(store: &dyn TaskStore, id: &TaskId, status: TaskStatus, now: Timestamp) -> TaskRecord {
    let mut c = Change { now, status: Some(status), ..Change::default() };
    if status.is_terminal() {
        c.terminal_at = Some(now);
        c.expires_at = Some(Some(now.plus(Duration::from_secs(3600))));
        c.lease = Some(None);
        c.run_at = Some(None);
    }
    match status {
        TaskStatus::Completed => {
            c.result = Some(json!({ "content": [{ "type": "text", "text": format!("done {id}") }], "isError": false }))
        }
        TaskStatus::Failed => c.error = Some(TaskError::internal(format!("failed {id}"))),
        _ => {}
    }
    change(store, id, c).await
}

/// A lease held by `owner` until `expires_at`.
pub fn lease(owner: &str, expires_at: Timestamp) -> Lease {
    Lease { owner: owner.to_owned(), expires_at }
}

/// Claim parameters: any tool, up to `limit`, at `now`, leased for a minute.
pub fn claim_params(owner: &str, now: Timestamp, limit: usize) -> ClaimParams {
    ClaimParams { owner: owner.to_owned(), now, lease_expires_at: now.plus(Duration::from_secs(60)), limit, tools: None }
}

/// The ids of `records`, in order.
pub fn ids(records: &[TaskRecord]) -> Vec<TaskId> {
    records.iter().map(|r| r.id.clone()).collect()
}
