//! Property tests of the reference store: random sequences of guarded
//! updates never change a terminal task and never apply a stale version.

use mcp_tasks_core::TaskRecord;
use mcp_tasks_core::status::ALL_STATUSES;
use mcp_tasks_store::conformance::support::{at, claim_params, new_task};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, MemoryStore, TaskStore, UpdateOutcome};
use proptest::prelude::*;

/// One step of a random history.
#[derive(Debug, Clone)]
enum Step {
    /// A change of task `task`, guarded on its version read `lag` changes ago
    /// (0: current; `None`: no version guard), optionally on a status.
    Change { task: usize, lag: Option<i64>, status_guard: Option<usize>, to: Option<usize> },
    /// A delete of task `task`, guarded like a change.
    Delete { task: usize, lag: Option<i64> },
    /// A claim of up to two tasks.
    Claim,
    /// A poll of task `task` at `secs`.
    Poll { task: usize, secs: i64 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..3usize, proptest::option::of(0..3i64), proptest::option::of(0..5usize), proptest::option::of(0..5usize))
            .prop_map(|(task, lag, status_guard, to)| Step::Change { task, lag, status_guard, to }),
        2 => (0..3usize, proptest::option::of(0..2i64)).prop_map(|(task, lag)| Step::Delete { task, lag }),
        1 => Just(Step::Claim),
        1 => (0..3usize, 0..100i64).prop_map(|(task, secs)| Step::Poll { task, secs }),
    ]
}

/// Everything but the poll instant, which polls may move on any row.
fn without_polls(r: &TaskRecord) -> TaskRecord {
    TaskRecord { last_polled_at: None, ..r.clone() }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn terminal_rows_are_final_and_stale_versions_lose(steps in proptest::collection::vec(step(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        rt.block_on(async {
            let store = MemoryStore::new();
            let mut ids = Vec::new();
            for i in 0..3 {
                ids.push(store.create(new_task("report", at(i))).await.expect("create").record.id);
            }
            for (n, step) in steps.into_iter().enumerate() {
                let now = at(10 + n as i64);
                let mut before = Vec::new();
                for id in &ids {
                    before.push(store.get(id).await.expect("get"));
                }
                let (task, lag, update) = match step {
                    Step::Change { task, lag, status_guard, to } => {
                        let change = Change {
                            now,
                            status: to.map(|i| ALL_STATUSES[i]),
                            status_message: Some(Some(format!("step {n}"))),
                            terminal_at: to.filter(|i| ALL_STATUSES[*i].is_terminal()).map(|_| now),
                            ..Change::default()
                        };
                        let mut guard = Guard::id(ids[task].clone());
                        guard.status = status_guard.map(|i| ALL_STATUSES[i]);
                        (task, lag, Some((guard, Some(change))))
                    }
                    Step::Delete { task, lag } => (task, lag, Some((Guard::id(ids[task].clone()), None))),
                    Step::Claim => {
                        store.claim(claim_params("exec", now, 2)).await.expect("claim");
                        (0, None, None)
                    }
                    Step::Poll { task, secs } => {
                        store.record_polls(&[(ids[task].clone(), at(secs))]).await.expect("record_polls");
                        (0, None, None)
                    }
                };
                if let Some((mut guard, change)) = update {
                    let current = before[task].as_ref().map(|r| r.version);
                    guard.version = match (lag, current) {
                        (Some(lag), Some(v)) => Some(v - lag),
                        _ => None,
                    };
                    let stale = matches!((lag, current), (Some(lag), Some(_)) if lag > 0);
                    let update = match change {
                        Some(c) => GuardedUpdate::change(guard, c),
                        None => GuardedUpdate::delete(guard),
                    };
                    let outcome = store.apply(vec![update]).await.expect("apply").remove(0);
                    if stale {
                        prop_assert_eq!(&outcome, &UpdateOutcome::Lost, "a stale version applied at step {}", n);
                    }
                    if before[task].is_none() {
                        prop_assert_eq!(&outcome, &UpdateOutcome::NotFound);
                    }
                }
                for (i, id) in ids.iter().enumerate() {
                    let after = store.get(id).await.expect("get");
                    if let Some(old) = before[i].as_ref().filter(|r| r.status.is_terminal())
                        && let Some(new) = &after
                    {
                        prop_assert_eq!(without_polls(new), without_polls(old), "terminal task {} changed at step {}", i, n);
                    }
                    if let (Some(old), Some(new)) = (&before[i], &after) {
                        prop_assert!(new.version >= old.version, "a version went backwards");
                        prop_assert!(old.status.is_live() || new.status == old.status);
                    }
                    if before[i].is_none() {
                        prop_assert!(after.is_none(), "a deleted task came back");
                    }
                }
            }
            Ok(())
        })?;
    }
}
