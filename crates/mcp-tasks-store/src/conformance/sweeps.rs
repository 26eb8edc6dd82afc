//! The maintenance passes' candidate queries.

use mcp_tasks_core::TaskStatus;

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

async fn sweep(store: &dyn TaskStore, query: SweepQuery) -> Vec<mcp_tasks_core::TaskId> {
    ids(&store.sweep_candidates(query.clone()).await.unwrap_or_else(|e| panic!("{query:?}: {e}")))
}

/// `PastDeadline`: live tasks with `deadline_at <= now`, earliest first.
pub async fn sweep_past_deadline(store: &dyn TaskStore) {
    let with_deadline = |deadline: i64| NewTask { deadline_at: at(deadline), ..new_task("report", at(0)) };
    let d10 = create(store, with_deadline(10)).await;
    let d30 = create(store, with_deadline(30)).await;
    let d20 = create(store, with_deadline(20)).await;
    let _d31 = create(store, with_deadline(31)).await;
    let waiting = create(store, with_deadline(25)).await;
    finish(store, &waiting.id, TaskStatus::InputRequired, at(1)).await;
    for terminal in [TaskStatus::Completed, TaskStatus::Failed, TaskStatus::Cancelled] {
        let t = create(store, with_deadline(5)).await;
        finish(store, &t.id, terminal, at(1)).await;
    }
    let all = sweep(store, SweepQuery::PastDeadline { now: at(30), limit: 100 }).await;
    assert_eq!(all, vec![d10.id.clone(), d20.id, waiting.id, d30.id], "live tasks past deadline, earliest first");
    assert_eq!(sweep(store, SweepQuery::PastDeadline { now: at(30), limit: 1 }).await, vec![d10.id]);
    assert!(sweep(store, SweepQuery::PastDeadline { now: at(9), limit: 100 }).await.is_empty());
}

/// `Unseen`: live tasks whose last poll (or creation) is at or before the
/// cutoff, longest silent first.
pub async fn sweep_unseen(store: &dyn TaskStore) {
    let never = create(store, new_task("report", at(0))).await;
    let polled_late = create(store, new_task("report", at(0))).await;
    let polled_early = create(store, new_task("report", at(0))).await;
    let young = create(store, new_task("report", at(40))).await;
    let waiting = create(store, new_task("report", at(10))).await;
    finish(store, &waiting.id, TaskStatus::InputRequired, at(11)).await;
    let done = create(store, new_task("report", at(0))).await;
    finish(store, &done.id, TaskStatus::Completed, at(1)).await;
    store.record_polls(&[(polled_late.id.clone(), at(50)), (polled_early.id.clone(), at(20))]).await.expect("record_polls");
    store.record_polls(&[(polled_late.id.clone(), at(15))]).await.expect("record_polls");

    let unseen = sweep(store, SweepQuery::Unseen { cutoff: at(45), limit: 100 }).await;
    assert_eq!(
        unseen,
        vec![never.id.clone(), waiting.id.clone(), polled_early.id.clone(), young.id.clone()],
        "live tasks silent since the cutoff (last poll, else creation), longest silent first"
    );
    assert_eq!(sweep(store, SweepQuery::Unseen { cutoff: at(45), limit: 2 }).await, vec![never.id.clone(), waiting.id]);
    assert_eq!(
        sweep(store, SweepQuery::Unseen { cutoff: at(0), limit: 100 }).await,
        vec![never.id],
        "the cutoff is inclusive"
    );
}

/// `Expired`: terminal tasks with `expires_at <= now`, earliest first.
pub async fn sweep_expired(store: &dyn TaskStore) {
    let mut by_expiry = std::collections::BTreeMap::new();
    for (status, expires) in [(TaskStatus::Completed, 100), (TaskStatus::Failed, 50), (TaskStatus::Cancelled, 200)] {
        let t = create(store, new_task("report", at(0))).await;
        let finishing = Change {
            now: at(1),
            status: Some(status),
            terminal_at: Some(at(1)),
            expires_at: Some(Some(at(expires))),
            ..Change::default()
        };
        change(store, &t.id, finishing).await;
        by_expiry.insert(expires, t.id);
    }
    let kept_forever = create(store, new_task("report", at(0))).await;
    let finishing =
        Change { now: at(1), status: Some(TaskStatus::Completed), terminal_at: Some(at(1)), ..Change::default() };
    change(store, &kept_forever.id, finishing).await;
    let live = create(store, new_task("report", at(0))).await;
    change(store, &live.id, Change { now: at(1), expires_at: Some(Some(at(10))), ..Change::default() }).await;

    assert_eq!(
        sweep(store, SweepQuery::Expired { now: at(100), limit: 100 }).await,
        vec![by_expiry[&50].clone(), by_expiry[&100].clone()],
        "terminal tasks expired by now (inclusive), earliest first; live ones never"
    );
    assert_eq!(sweep(store, SweepQuery::Expired { now: at(100), limit: 1 }).await, vec![by_expiry[&50].clone()]);
    assert_eq!(
        sweep(store, SweepQuery::Expired { now: at(100_000), limit: 100 }).await,
        by_expiry.into_values().collect::<Vec<_>>(),
        "a terminal task without expires_at never expires"
    );
}

/// `Leased`: live tasks whose lease lapses at or before the cutoff, or every
/// live leased task without one; earliest lapse first.
pub async fn sweep_leased(store: &dyn TaskStore) {
    let leased_until =
        |owner: &str, until: i64| Change { now: at(1), lease: Some(Some(lease(owner, at(until)))), ..Change::default() };
    let l30 = create(store, new_task("report", at(0))).await;
    change(store, &l30.id, leased_until("a", 30)).await;
    let l10 = create(store, new_task("report", at(0))).await;
    change(store, &l10.id, leased_until("b", 10)).await;
    let l90 = create(store, new_task("report", at(0))).await;
    change(store, &l90.id, Change { status: Some(TaskStatus::InputRequired), ..leased_until("a", 90) }).await;
    let _unleased = create(store, new_task("report", at(0))).await;
    let done = create(store, new_task("report", at(0))).await;
    change(store, &done.id, leased_until("a", 5)).await;
    change(
        store,
        &done.id,
        Change { now: at(2), status: Some(TaskStatus::Failed), terminal_at: Some(at(2)), ..Change::default() },
    )
    .await;

    assert_eq!(
        sweep(store, SweepQuery::Leased { before: Some(at(30)), limit: 100 }).await,
        vec![l10.id.clone(), l30.id.clone()],
        "live leases lapsed by the cutoff (inclusive), earliest first; terminal rows never"
    );
    assert_eq!(
        sweep(store, SweepQuery::Leased { before: None, limit: 100 }).await,
        vec![l10.id.clone(), l30.id, l90.id],
        "without a cutoff, every live lease"
    );
    assert_eq!(sweep(store, SweepQuery::Leased { before: None, limit: 1 }).await, vec![l10.id]);
    assert!(sweep(store, SweepQuery::Leased { before: Some(at(9)), limit: 100 }).await.is_empty());
}
