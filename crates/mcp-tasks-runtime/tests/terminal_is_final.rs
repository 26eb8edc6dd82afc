//! Property: whatever the interleaving of creations, runs, cancels, answers,
//! clock jumps, sweeps, triage by another instance and shutdown, a task once
//! terminal never changes again (it may only be deleted by expiry).

use crate::support;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use mcp_tasks_core::{TaskId, TaskRecord};
use mcp_tasks_runtime::{CreateTask, Runtime, ToolFailure, TriageScope};
use proptest::prelude::*;
use serde_json::json;
use support::*;

#[derive(Debug, Clone)]
enum Op {
    Create(usize),
    RunDue,
    Cancel(usize),
    Answer(usize),
    Get(usize),
    Advance(u64),
    Reap,
    TriageElsewhere,
    Yield,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..5).prop_map(Op::Create),
        3 => Just(Op::RunDue),
        2 => any::<prop::sample::Index>().prop_map(|i| Op::Cancel(i.index(64))),
        2 => any::<prop::sample::Index>().prop_map(|i| Op::Answer(i.index(64))),
        1 => any::<prop::sample::Index>().prop_map(|i| Op::Get(i.index(64))),
        2 => prop::sample::select(vec![1u64, 20, 31, 400, 900, 1800, 3600]).prop_map(Op::Advance),
        2 => Just(Op::Reap),
        1 => Just(Op::TriageElsewhere),
        2 => Just(Op::Yield),
    ]
}

const TOOLS: [&str; 5] = ["ok", "transient", "permanent", "ask", "slow"];

fn runtime(store: std::sync::Arc<dyn mcp_tasks_store::TaskStore>, clock: &mcp_tasks_core::ManualClock) -> Runtime {
    builder(store, clock)
        .tool(FnTool::new("ok", |ctx| async move { Ok(json!({"attempt": ctx.attempt()})) }))
        .tool(failing("transient", ToolFailure::new("service unavailable")))
        .tool(failing("permanent", ToolFailure::new("invalid input")))
        .tool(FnTool::new("ask", |ctx| async move {
            let answers = ctx
                .request_input(BTreeMap::from([("q".to_owned(), json!({"method": "elicitation/create"}))]))
                .await
                .map_err(|e| ToolFailure::permanent(e.to_string()))?;
            Ok(json!({"a": answers["q"]}))
        }))
        // Ignores cancellation for a while, then reports success anyway.
        .tool(FnTool::new("slow", |_ctx| async move {
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            Ok(json!({"slow": true}))
        }))
        .build()
        .unwrap()
}

/// A task's state: everything but the poll timestamp (polls are reads,
/// flushed lazily, and say nothing about the task's outcome).
fn state(mut r: TaskRecord) -> TaskRecord {
    r.last_polled_at = None;
    r
}

async fn scenario(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let clock = clock();
    let store = memory();
    let rt = runtime(store.clone(), &clock);
    let other = runtime(store.clone(), &clock);
    let mut ids: Vec<TaskId> = Vec::new();
    let mut terminal: HashMap<TaskId, Option<TaskRecord>> = HashMap::new();
    let pick = |ids: &Vec<TaskId>, i: usize| (!ids.is_empty()).then(|| ids[i % ids.len()].clone());

    for op in ops.into_iter().chain([Op::Yield]) {
        match op {
            Op::Create(t) => {
                if let Ok(v) = rt.create_task(CreateTask::new(TOOLS[t], json!({}))).await {
                    ids.push(v.record.id);
                }
            }
            Op::RunDue => {
                let _ = rt.run_due_once().await;
            }
            Op::Cancel(i) => {
                if let Some(id) = pick(&ids, i) {
                    let _ = rt.cancel_task(&id, None).await;
                }
            }
            Op::Answer(i) => {
                if let Some(id) = pick(&ids, i) {
                    let _ = rt.answer_input(&id, None, BTreeMap::from([("q".to_owned(), json!("yes"))])).await;
                }
            }
            Op::Get(i) => {
                if let Some(id) = pick(&ids, i) {
                    let _ = rt.get_task(&id, None).await;
                }
            }
            Op::Advance(s) => clock.advance(Duration::from_secs(s)),
            Op::Reap => {
                rt.reap_once().await.map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            Op::TriageElsewhere => {
                other.triage_once(TriageScope::ExpiredLeases).await.map_err(|e| TestCaseError::fail(e.to_string()))?;
                let _ = other.run_due_once().await;
            }
            Op::Yield => {
                for _ in 0..50 {
                    tokio::task::yield_now().await;
                }
            }
        }
        // Check every task seen terminal is unchanged (or deleted, for good).
        for id in &ids {
            let now = store.get(id).await.map_err(|e| TestCaseError::fail(e.to_string()))?.map(state);
            if let Some(r) = &now {
                prop_assert!(r.attempt >= 1 && r.attempt <= r.max_attempts, "attempt {} of {}", r.attempt, r.max_attempts);
                if r.status.is_terminal() {
                    prop_assert!(r.lease.is_none() && r.run_at.is_none(), "terminal task {} still leased or due", id);
                    prop_assert!(r.terminal_at.is_some() && r.expires_at.is_some());
                }
            }
            match terminal.get(id) {
                Some(Some(before)) => match &now {
                    Some(after) => prop_assert_eq!(after, before, "terminal task {} changed", id),
                    None => {
                        terminal.insert(id.clone(), None);
                    }
                },
                Some(None) => prop_assert!(now.is_none(), "deleted task {} came back", id),
                None => {
                    if let Some(r) = now.filter(|r| r.status.is_terminal()) {
                        terminal.insert(id.clone(), Some(r));
                    }
                }
            }
        }
    }
    rt.shutdown(Duration::ZERO).await;
    other.shutdown(Duration::ZERO).await;
    for (id, before) in &terminal {
        let now = store.get(id).await.unwrap().map(state);
        match before {
            Some(b) => prop_assert!(now.is_none() || now.as_ref() == Some(b), "shutdown changed terminal task {}", id),
            None => prop_assert!(now.is_none()),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn terminal_tasks_never_change(ops in prop::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        rt.block_on(scenario(ops))?;
    }
}
