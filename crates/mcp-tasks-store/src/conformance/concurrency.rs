//! Many callers at once: claims, creates and guarded updates.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_tasks_core::{TaskId, TaskStatus};
use serde_json::json;

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

/// Creates `n` due tasks through concurrent callers; returns their ids.
async fn create_many(store: &Arc<dyn TaskStore>, n: usize, callers: usize) -> Vec<TaskId> {
    let per_caller = n.div_ceil(callers);
    let mut handles = Vec::new();
    for caller in 0..callers {
        let store = Arc::clone(store);
        let count = per_caller.min(n.saturating_sub(caller * per_caller));
        handles.push(tokio::spawn(async move {
            let mut made = Vec::new();
            for i in 0..count {
                let run_at = ((caller * per_caller + i) % 50) as i64;
                let new = NewTask { run_at: at(run_at), ..new_task("report", at(0)) };
                made.push(create(&*store, new).await.id);
            }
            made
        }));
    }
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.expect("creator panicked"));
    }
    all
}

/// 8 claimers racing over 200 due tasks never receive the same task, and
/// together receive all of them.
pub async fn concurrent_claimers_never_share_a_task(store: Arc<dyn TaskStore>) {
    let created: HashSet<TaskId> = create_many(&store, 200, 8).await.into_iter().collect();
    assert_eq!(created.len(), 200);
    let mut claimers = Vec::new();
    for c in 0..8 {
        let store = Arc::clone(&store);
        claimers.push(tokio::spawn(async move {
            let owner = format!("exec-{c}");
            let mut mine = Vec::new();
            loop {
                let batch = store.claim(claim_params(&owner, at(100), 3)).await.expect("claim");
                if batch.is_empty() {
                    break mine;
                }
                assert!(batch.iter().all(|r| r.lease.as_ref().is_some_and(|l| l.owner == owner)));
                mine.extend(ids(&batch));
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut seen = HashSet::new();
    for claimer in claimers {
        for id in claimer.await.expect("claimer panicked") {
            assert!(seen.insert(id.clone()), "task {id} was claimed twice");
        }
    }
    assert_eq!(seen, created, "together the claimers take every due task");
}

/// 256 creations from 64 concurrent callers are all readable once each
/// returns.
pub async fn concurrent_creates_are_all_visible(store: Arc<dyn TaskStore>) {
    let made = create_many(&store, 256, 64).await;
    let distinct: HashSet<_> = made.iter().cloned().collect();
    assert_eq!(distinct.len(), 256);
    for id in &made {
        assert_eq!(get(&*store, id).await.status, TaskStatus::Working);
    }
    assert_eq!(store.count_by_status().await.expect("count")[&TaskStatus::Working], 256);
    assert_eq!(store.list(ListQuery::default()).await.expect("list").len(), 256);
}

/// 16 concurrent creations of one call under one key make exactly one task,
/// and every caller gets it.
pub async fn concurrent_creates_with_one_key_agree(store: Arc<dyn TaskStore>) {
    let mut handles = Vec::new();
    for _ in 0..16 {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move {
            let new = NewTask {
                principal: Some("alice".into()),
                idempotency_key: Some("once".into()),
                trace_parent: None,
                arguments: json!({ "x": 1 }),
                ..new_task("report", at(0))
            };
            store.create(new).await.expect("create")
        }));
    }
    let mut created = 0;
    let mut ids = HashSet::new();
    for h in handles {
        let c = h.await.expect("creator panicked");
        created += usize::from(c.created);
        ids.insert(c.record.id);
    }
    assert_eq!(created, 1, "exactly one creation under one key");
    assert_eq!(ids.len(), 1, "every caller gets the same task");
    assert_eq!(store.list(ListQuery::default()).await.expect("list").len(), 1);
}

/// 16 callers racing to finish one task from the same read: exactly one wins.
pub async fn concurrent_guarded_updates_have_one_winner(store: Arc<dyn TaskStore>) {
    let read = create(&*store, new_task("report", at(0))).await;
    let mut handles = Vec::new();
    for i in 0..16u32 {
        let store = Arc::clone(&store);
        let guard = Guard::read(&read);
        handles.push(tokio::spawn(async move {
            let status = if i % 2 == 0 { TaskStatus::Completed } else { TaskStatus::Cancelled };
            let c = Change {
                now: at(1),
                status: Some(status),
                status_message: Some(Some(format!("winner {i}"))),
                terminal_at: Some(at(1)),
                ..Change::default()
            };
            (i, apply_one(&*store, GuardedUpdate::change(guard, c)).await)
        }));
    }
    let mut winners = Vec::new();
    for h in handles {
        let (i, outcome) = h.await.expect("updater panicked");
        match outcome {
            UpdateOutcome::Applied(Some(r)) => winners.push((i, r)),
            UpdateOutcome::Lost => {}
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one compare-and-set wins");
    let (i, won) = winners.remove(0);
    assert_eq!(won.status_message, Some(format!("winner {i}")));
    assert_eq!(get(&*store, &read.id).await, won, "the winner's change is what is stored");
}
