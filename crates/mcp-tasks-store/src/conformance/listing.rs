//! Operator listings: `list`, `count_by_status`, `recent_durations`.

use mcp_tasks_core::TaskStatus;
use mcp_tasks_core::status::ALL_STATUSES;

use super::support::*;
use crate::params::*;
use crate::store::TaskStore;

/// `list` filters by status and tool, returns newest first, honours `limit`
/// (0: no limit).
pub async fn list_filters_and_orders(store: &dyn TaskStore) {
    let mut made = Vec::new();
    for (secs, tool, status) in [
        (1, "alpha", TaskStatus::Working),
        (2, "beta", TaskStatus::Completed),
        (3, "alpha", TaskStatus::Failed),
        (4, "alpha", TaskStatus::InputRequired),
        (5, "beta", TaskStatus::Cancelled),
    ] {
        let t = create(store, new_task(tool, at(secs))).await;
        if status != TaskStatus::Working {
            finish(store, &t.id, status, at(10)).await;
        }
        made.push(t.id);
    }
    let list = |q: ListQuery| async move { ids(&store.list(q).await.expect("list")) };
    let newest_first: Vec<_> = made.iter().rev().cloned().collect();
    assert_eq!(list(ListQuery::default()).await, newest_first, "everything, newest first");
    assert_eq!(list(ListQuery { limit: 2, ..ListQuery::default() }).await, newest_first[..2].to_vec());
    let finished = ListQuery { statuses: vec![TaskStatus::Completed, TaskStatus::Failed], ..ListQuery::default() };
    assert_eq!(list(finished).await, vec![made[2].clone(), made[1].clone()]);
    let alphas = ListQuery { tool: Some("alpha".into()), ..ListQuery::default() };
    assert_eq!(list(alphas).await, vec![made[3].clone(), made[2].clone(), made[0].clone()]);
    let live_betas =
        ListQuery { tool: Some("beta".into()), statuses: vec![TaskStatus::Working], limit: 10, ..ListQuery::default() };
    assert!(list(live_betas).await.is_empty());
    let full = store.list(ListQuery { limit: 1, ..ListQuery::default() }).await.expect("list");
    assert_eq!(full, vec![get(store, &made[4]).await], "list returns whole records");
}

/// `count_by_status_and_tool` counts each (status, tool) pair present, and
/// only those.
pub async fn count_by_status_and_tool_counts_each_pair(store: &dyn TaskStore) {
    assert!(store.count_by_status_and_tool().await.expect("count").is_empty(), "an empty store has no pairs");
    let plan = [
        (TaskStatus::Working, "alpha", 2),
        (TaskStatus::Completed, "alpha", 1),
        (TaskStatus::Working, "beta", 1),
        (TaskStatus::Failed, "beta", 3),
    ];
    for (status, tool, n) in plan {
        for _ in 0..n {
            let t = create(store, new_task(tool, at(0))).await;
            if status != TaskStatus::Working {
                finish(store, &t.id, status, at(1)).await;
            }
        }
    }
    let counts = store.count_by_status_and_tool().await.expect("count");
    let expected: std::collections::BTreeMap<_, _> =
        plan.into_iter().map(|(status, tool, n)| ((status, tool.to_owned()), n)).collect();
    assert_eq!(counts, expected);
}

/// `count_by_status` reports every status, zero included.
pub async fn count_by_status_counts_every_status(store: &dyn TaskStore) {
    let empty = store.count_by_status().await.expect("count_by_status");
    assert_eq!(empty, ALL_STATUSES.into_iter().map(|s| (s, 0)).collect(), "an empty store counts 0 of each status");
    let plan =
        [(TaskStatus::Working, 3), (TaskStatus::InputRequired, 1), (TaskStatus::Completed, 2), (TaskStatus::Cancelled, 1)];
    for (status, n) in plan {
        for _ in 0..n {
            let t = create(store, new_task("report", at(0))).await;
            if status != TaskStatus::Working {
                finish(store, &t.id, status, at(1)).await;
            }
        }
    }
    let counts = store.count_by_status().await.expect("count_by_status");
    let mut expected: std::collections::BTreeMap<_, _> = ALL_STATUSES.into_iter().map(|s| (s, 0)).collect();
    expected.extend(plan);
    assert_eq!(counts, expected);
}

/// `recent_durations` gives `terminal_at − created_at` of completed tasks of
/// one tool, most recently finished first.
pub async fn recent_durations_newest_first(store: &dyn TaskStore) {
    let slow = create(store, new_task("render", at(0))).await;
    finish(store, &slow.id, TaskStatus::Completed, at(30)).await;
    let quick = create(store, new_task("render", at(10))).await;
    finish(store, &quick.id, TaskStatus::Completed, at(15)).await;
    let latest = create(store, new_task("render", at(100))).await;
    finish(store, &latest.id, TaskStatus::Completed, at(102)).await;
    let failed = create(store, new_task("render", at(5))).await;
    finish(store, &failed.id, TaskStatus::Failed, at(500)).await;
    let other_tool = create(store, new_task("index", at(0))).await;
    finish(store, &other_tool.id, TaskStatus::Completed, at(600)).await;
    create(store, new_task("render", at(0))).await;

    let durations = |limit| async move { store.recent_durations("render", limit).await.expect("recent_durations") };
    assert_eq!(durations(10).await, vec![2_000, 30_000, 5_000], "completed render tasks only, newest first, in ms");
    assert_eq!(durations(2).await, vec![2_000, 30_000]);
    assert!(store.recent_durations("unknown", 10).await.expect("recent_durations").is_empty());
}
