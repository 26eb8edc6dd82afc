//! The differential test every durable backend runs: random histories of
//! store operations must give exactly the results the in-memory reference
//! store ([`MemoryStore`]) gives — every answer, every row after every step
//! (read plainly and as each principal), and the listings at the end.
//!
//! A backend drives it with proptest:
//!
//! ```
//! use mcp_tasks_store::MemoryStore;
//! use mcp_tasks_store::conformance::differential::{op, run};
//! use proptest::prelude::*;
//!
//! proptest! {
//!     #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
//!     // In a test file, put `#[test]` on it.
//!     fn my_store_agrees_with_the_reference_store(ops in proptest::collection::vec(op(), 1..40)) {
//!         let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//!         rt.block_on(run(ops, &MemoryStore::new()))?; // your store here, fresh and empty
//!     }
//! }
//! # fn main() { my_store_agrees_with_the_reference_store(); }
//! ```

use std::time::Duration;

use mcp_tasks_core::status::ALL_STATUSES;
use mcp_tasks_core::{FailureClass, TaskError, TaskId};
use proptest::prelude::*;
use serde_json::json;

use super::support::{at, lease, new_task};
use crate::{
    AttemptEnd, AttemptOutcome, Change, ClaimParams, DeadLetterQuery, Guard, GuardedUpdate, ListQuery, MemoryStore,
    NewDeadLetter, NewTask, PurgeQuery, SweepQuery, TaskStore,
};

/// One step of a history. The fields are the generator's small indices
/// (which task, which status, seconds past a base instant), read by [`run`].
#[derive(Debug, Clone)]
#[allow(missing_docs)]
pub enum Op {
    /// A creation (principal, idempotency key, arguments and tool picked from small sets).
    Create { principal: Option<u8>, key: Option<u8>, args: u8, tool: u8, secs: i64 },
    /// A guarded change of a known task, perhaps with a stale version.
    Change {
        task: usize,
        stale: bool,
        guard_status: Option<usize>,
        guard_lease: bool,
        to: Option<usize>,
        lease: Option<bool>,
        dead: bool,
        secs: i64,
    },
    /// A guarded deletion.
    Delete { task: usize },
    /// A claim of due work.
    Claim { limit: usize, only_tool: Option<u8>, secs: i64 },
    /// A recorded poll.
    Poll { task: usize, secs: i64 },
    /// A dead letter requeued.
    Requeue { task: usize },
    /// Dead letters purged before an instant.
    Purge { before: i64 },
    /// A sweep query of one kind.
    Sweep { kind: u8, secs: i64, limit: usize },
}

/// Random steps, weighted towards creations and guarded changes.
pub fn op() -> impl Strategy<Value = Op> {
    let secs = 0..200i64;
    prop_oneof![
        4 => (proptest::option::of(0..2u8), proptest::option::of(0..3u8), 0..2u8, 0..2u8, secs.clone())
            .prop_map(|(principal, key, args, tool, secs)| Op::Create { principal, key, args, tool, secs }),
        6 => (0..8usize, any::<bool>(), proptest::option::of(0..5usize), any::<bool>(), proptest::option::of(0..5usize),
              proptest::option::of(any::<bool>()), any::<bool>(), secs.clone())
            .prop_map(|(task, stale, guard_status, guard_lease, to, lease, dead, secs)|
                Op::Change { task, stale, guard_status, guard_lease, to, lease, dead, secs }),
        1 => (0..8usize).prop_map(|task| Op::Delete { task }),
        2 => (0..4usize, proptest::option::of(0..2u8), secs.clone()).prop_map(|(limit, only_tool, secs)| Op::Claim { limit, only_tool, secs }),
        2 => (0..8usize, secs.clone()).prop_map(|(task, secs)| Op::Poll { task, secs }),
        1 => (0..8usize).prop_map(|task| Op::Requeue { task }),
        1 => secs.clone().prop_map(|before| Op::Purge { before }),
        2 => (0..5u8, secs, 1..5usize).prop_map(|(kind, secs, limit)| Op::Sweep { kind, secs, limit }),
    ]
}

const TOOLS: [&str; 2] = ["alpha", "beta"];

/// Runs `ops` on a fresh [`MemoryStore`] and on `store` (fresh and empty)
/// and fails at the first step where their answers or rows differ.
pub async fn run(ops: Vec<Op>, store: &dyn TaskStore) -> Result<(), TestCaseError> {
    let memory = MemoryStore::new();
    let mut ids: Vec<TaskId> = Vec::new();
    let pick = |ids: &Vec<TaskId>, i: usize| ids.get(i % ids.len().max(1)).cloned().unwrap_or_else(TaskId::random);
    for (n, op) in ops.into_iter().enumerate() {
        let step = format!("step {n}: {op:?}");
        match op {
            Op::Create { principal, key, args, tool, secs } => {
                let new = NewTask {
                    principal: principal.map(|p| format!("user-{p}")),
                    idempotency_key: key.map(|k| format!("key-{k}")),
                    trace_parent: None,
                    arguments: json!({ "a": args }),
                    deadline_at: at(secs + 60),
                    ..new_task(TOOLS[tool as usize], at(secs))
                };
                let a = memory.create(new.clone()).await;
                let b = store.create(new.clone()).await;
                prop_assert_eq!(&a, &b, "{}", step);
                if a.is_ok() {
                    ids.push(new.id);
                }
            }
            Op::Change { task, stale, guard_status, guard_lease, to, lease: new_lease, dead, secs } => {
                let id = pick(&ids, task);
                let current = memory.get(&id).await.unwrap();
                let mut guard = Guard::id(id.clone());
                guard.version = current.as_ref().map(|r| r.version - i64::from(stale));
                guard.status = guard_status.map(|i| ALL_STATUSES[i]);
                guard.lease_owner = guard_lease.then(|| "exec".to_owned());
                let status = to.map(|i| ALL_STATUSES[i]);
                let terminal = status.is_some_and(|s| s.is_terminal());
                let change = Change {
                    now: at(secs),
                    status,
                    status_message: Some(Some(format!("step {n}"))),
                    lease: new_lease.map(|l| l.then(|| lease("exec", at(secs + 30)))),
                    terminal_at: terminal.then(|| at(secs)),
                    expires_at: terminal.then(|| Some(at(secs + 50))),
                    error: dead.then(|| TaskError::internal("boom")),
                    dead_letter: dead.then(|| NewDeadLetter {
                        reason: "poison".into(),
                        error: TaskError::internal("boom"),
                        dead_at: at(secs),
                    }),
                    // A status change ends an attempt: written only if it applies.
                    attempt_end: status.map(|s| AttemptEnd {
                        attempt: current.as_ref().map_or(1, |r| r.attempt),
                        started_at: (secs % 2 == 0).then(|| at(secs / 2)),
                        owner: guard_lease.then(|| "exec".to_owned()),
                        outcome: if terminal { AttemptOutcome::Failed } else { AttemptOutcome::LeaseLapsed },
                        class: terminal.then_some(FailureClass::Permanent),
                        error: dead.then(|| TaskError::internal("boom")),
                        message: Some(format!("to {s}")),
                    }),
                    ..Change::default()
                };
                let update = GuardedUpdate::change(guard, change);
                let a = memory.apply(vec![update.clone()]).await;
                let b = store.apply(vec![update]).await;
                prop_assert_eq!(a, b, "{}", step);
            }
            Op::Delete { task } => {
                let update = GuardedUpdate::delete(Guard::id(pick(&ids, task)));
                prop_assert_eq!(memory.apply(vec![update.clone()]).await, store.apply(vec![update]).await, "{}", step);
            }
            Op::Claim { limit, only_tool, secs } => {
                let params = ClaimParams {
                    owner: "exec".into(),
                    now: at(secs),
                    lease_expires_at: at(secs).plus(Duration::from_secs(30)),
                    limit,
                    tools: only_tool.map(|t| vec![TOOLS[t as usize].to_owned()]),
                };
                prop_assert_eq!(memory.claim(params.clone()).await, store.claim(params).await, "{}", step);
            }
            Op::Poll { task, secs } => {
                let polls = [(pick(&ids, task), at(secs))];
                prop_assert_eq!(memory.record_polls(&polls).await, store.record_polls(&polls).await, "{}", step);
            }
            Op::Requeue { task } => {
                let id = pick(&ids, task);
                let new = new_task("alpha", at(500));
                let a = memory.requeue_dead_letter(&id, new.clone()).await;
                let b = store.requeue_dead_letter(&id, new.clone()).await;
                prop_assert_eq!(&a, &b, "{}", step);
                if a.is_ok() {
                    ids.push(new.id);
                }
            }
            Op::Purge { before } => {
                let q = PurgeQuery { dead_before: Some(at(before)), ..PurgeQuery::default() };
                prop_assert_eq!(memory.purge_dead_letters(q.clone()).await, store.purge_dead_letters(q).await, "{}", step);
            }
            Op::Sweep { kind, secs, limit } => {
                let q = match kind {
                    0 => SweepQuery::PastDeadline { now: at(secs), limit },
                    1 => SweepQuery::Unseen { cutoff: at(secs), limit },
                    2 => SweepQuery::Expired { now: at(secs), limit },
                    3 => SweepQuery::Leased { before: Some(at(secs)), limit },
                    _ => SweepQuery::Leased { before: None, limit },
                };
                prop_assert_eq!(memory.sweep_candidates(q.clone()).await, store.sweep_candidates(q).await, "{}", step);
            }
        }
        for id in &ids {
            prop_assert_eq!(memory.get(id).await, store.get(id).await, "{} (task {})", step, id);
            for principal in [None, Some("user-0"), Some("user-1")] {
                prop_assert_eq!(
                    memory.get_visible(id, principal).await,
                    store.get_visible(id, principal).await,
                    "{} (task {} as {:?})",
                    step,
                    id,
                    principal
                );
            }
            prop_assert_eq!(memory.get_dead_letter(id).await, store.get_dead_letter(id).await, "{} (letter {})", step, id);
            prop_assert_eq!(memory.attempts(id).await, store.attempts(id).await, "{} (attempts of {})", step, id);
        }
    }
    prop_assert_eq!(memory.list(ListQuery::default()).await, store.list(ListQuery::default()).await);
    for id in ids.iter().take(3) {
        let query = ListQuery {
            principal: Some("user-0".into()),
            created_since: Some(at(1)),
            id_prefix: Some(id.as_str()[..2].to_owned()),
            ..ListQuery::default()
        };
        prop_assert_eq!(memory.list(query.clone()).await, store.list(query).await);
    }
    prop_assert_eq!(memory.count_by_status().await, store.count_by_status().await);
    prop_assert_eq!(memory.count_by_status_and_tool().await, store.count_by_status_and_tool().await);
    for tool in TOOLS {
        prop_assert_eq!(memory.recent_durations(tool, 10).await, store.recent_durations(tool, 10).await);
    }
    let all = DeadLetterQuery { include_requeued: true, ..DeadLetterQuery::default() };
    prop_assert_eq!(memory.list_dead_letters(all.clone()).await, store.list_dead_letters(all).await);
    Ok(())
}
