//! Claiming due tasks.

use mcp_tasks_core::{TaskId, TaskStatus};

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

/// A claim takes only due tasks (working, unleased, not cancel-requested,
/// `run_at <= now`), oldest `run_at` first, honours `limit` and the tool
/// filter, leases what it takes and bumps each version, and never hands out
/// a claimed task again.
pub async fn claim_takes_only_due_tasks_oldest_first(store: &dyn TaskStore) {
    let due = |tool: &str, run_at: i64| NewTask { run_at: at(run_at), ..new_task(tool, at(0)) };
    let a = create(store, due("report", 5)).await;
    let b = create(store, due("report", 1)).await;
    let c = create(store, due("other", 3)).await;
    let at_now = create(store, due("report", 50)).await;
    let future = create(store, due("report", 51)).await;
    let cancel_requested = create(store, due("report", 0)).await;
    change(store, &cancel_requested.id, Change { now: at(1), cancel_requested: Some(true), ..Change::default() }).await;
    let waiting = create(store, due("report", 0)).await;
    finish(store, &waiting.id, TaskStatus::InputRequired, at(1)).await;
    let done = create(store, due("report", 0)).await;
    finish(store, &done.id, TaskStatus::Completed, at(1)).await;
    let unscheduled = create(store, due("report", 0)).await;
    change(store, &unscheduled.id, Change { now: at(1), run_at: Some(None), ..Change::default() }).await;
    let leased = create(store, due("report", 0)).await;
    change(store, &leased.id, Change { now: at(1), lease: Some(Some(lease("exec-0", at(999)))), ..Change::default() }).await;

    let nothing = store.claim(claim_params("exec-1", at(50), 0)).await.expect("claim");
    assert!(nothing.is_empty(), "limit 0 claims nothing");
    let none_of_ours = ClaimParams { tools: Some(vec!["unknown_tool".into()]), ..claim_params("exec-1", at(50), 10) };
    assert!(store.claim(none_of_ours).await.expect("claim").is_empty(), "the tool filter excludes other tools");

    let reports_only = ClaimParams { tools: Some(vec!["report".into()]), ..claim_params("exec-1", at(50), 1) };
    let first = store.claim(reports_only).await.expect("claim");
    assert_eq!(ids(&first), vec![b.id.clone()], "the oldest due task of the filtered tools comes first");

    let params = claim_params("exec-1", at(50), 10);
    let rest = store.claim(params.clone()).await.expect("claim");
    assert_eq!(
        ids(&rest),
        vec![c.id.clone(), a.id.clone(), at_now.id.clone()],
        "due tasks oldest run_at first; run_at == now is due; nothing else"
    );
    for (claimed, before) in rest.iter().zip([&c, &a, &at_now]) {
        assert_eq!(claimed.lease, Some(lease("exec-1", params.lease_expires_at)), "a claim leases the task");
        assert_eq!(claimed.version, before.version + 1, "a claim bumps the version");
        assert_eq!(claimed.status, TaskStatus::Working);
        assert_eq!(&get(store, &claimed.id).await, claimed, "claim returns the stored row");
    }
    assert!(store.claim(claim_params("exec-2", at(50), 10)).await.expect("claim").is_empty(), "claimed tasks are not due");
    let later = store.claim(claim_params("exec-2", at(51), 10)).await.expect("claim");
    assert_eq!(ids(&later), vec![future.id.clone()], "a task becomes due at its run_at");
    let untouched: Vec<TaskId> = vec![cancel_requested.id, waiting.id, done.id, unscheduled.id];
    for id in untouched {
        assert_eq!(get(store, &id).await.lease, None, "{id} was never due, so never leased");
    }
    assert_eq!(get(store, &leased.id).await.lease, Some(lease("exec-0", at(999))), "an existing lease is kept");
}
