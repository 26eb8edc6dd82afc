//! Every attempt's end is recorded with the write that ends it: a retried
//! transient failure and the success after it, a poison run, a cancel, a
//! timeout. And `reap_plan` says what the next reaper pass would do without
//! doing it.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::reaper::ReaperAction;
use mcp_tasks_core::{FailureClass, Sweep, TaskStatus};
use mcp_tasks_runtime::ToolFailure;
use mcp_tasks_store::AttemptOutcome;
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_retry_then_a_success_is_two_attempts_with_their_classes() {
    let (_dir, path) = sqlite_file();
    let store = sqlite(&path);
    let clock = clock();
    let tool = FnTool::new("flaky", |ctx| async move {
        if ctx.attempt() == 1 { Err(ToolFailure::new("upstream timeout after 30s")) } else { Ok(json!({"ok": true})) }
    });
    let rt = builder(store.clone(), &clock).tool(tool).build().unwrap();
    let id = create(&rt, "flaky").await;
    assert_eq!(run_settled(&rt).await, 1);
    clock.advance(Duration::from_secs(5));
    assert_eq!(run_settled(&rt).await, 1);
    assert_eq!(stored(&store, &id).await.status, TaskStatus::Completed);

    let history = store.attempts(&id).await.unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    let (first, second) = (&history[0], &history[1]);
    assert_eq!((first.attempt, first.outcome, first.class), (1, AttemptOutcome::Failed, Some(FailureClass::Transient)));
    assert_eq!(first.error.as_ref().unwrap().message, "upstream timeout after 30s");
    assert_eq!((first.started_at, first.ended_at), (Some(T0), T0), "the manual clock stood still for attempt 1");
    assert!(first.owner.as_deref().unwrap().starts_with(rt.executor_id()), "{:?}", first.owner);
    assert_eq!((second.attempt, second.outcome, second.class), (2, AttemptOutcome::Completed, None));
    assert_eq!(second.ended_at, T0.plus(Duration::from_secs(5)));
    assert_ne!(first.owner, second.owner, "each claim holds its own lease");
}

#[tokio::test]
async fn a_poison_run_records_two_transient_attempts_and_the_poison_one() {
    let store = memory();
    let clock = clock();
    let rt = builder(store.clone(), &clock).tool(failing("doomed", ToolFailure::new("connection reset"))).build().unwrap();
    let id = create(&rt, "doomed").await;
    for _ in 1..=3 {
        clock.advance(Duration::from_secs(60));
        assert_eq!(run_settled(&rt).await, 1);
    }
    let classes: Vec<_> = store.attempts(&id).await.unwrap().iter().map(|a| (a.attempt, a.outcome, a.class)).collect();
    let failed = AttemptOutcome::Failed;
    assert_eq!(
        classes,
        vec![
            (1, failed, Some(FailureClass::Transient)),
            (2, failed, Some(FailureClass::Transient)),
            (3, failed, Some(FailureClass::Poison)),
        ]
    );
}

#[tokio::test]
async fn a_cancel_and_a_timeout_end_their_attempts() {
    let store = memory();
    let clock = clock();
    let rt = builder(store.clone(), &clock).tool(returning("report", json!({}))).build().unwrap();
    let cancelled = create(&rt, "report").await;
    rt.cancel_task(&cancelled, None).await.unwrap();
    let history = store.attempts(&cancelled).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].outcome, history[0].started_at, history[0].owner.as_deref()),
        (AttemptOutcome::Cancelled, None, None)
    );

    let overdue = create(&rt, "report").await;
    clock.advance(rt.policy().retention.max_execution + Duration::from_secs(1));
    assert_eq!(rt.reap_once().await.unwrap().timed_out, 1);
    let history = store.attempts(&overdue).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].outcome, AttemptOutcome::TimedOut);
    assert!(history[0].error.as_ref().unwrap().message.contains("timed out"), "{history:?}");
}

#[tokio::test]
async fn reap_plan_says_what_the_pass_would_do_and_changes_nothing() {
    let store = memory();
    let clock = clock();
    let rt = builder(store.clone(), &clock).tool(returning("report", json!({}))).build().unwrap();
    let overdue = create(&rt, "report").await;
    clock.advance(Duration::from_secs(60));
    let polled = create(&rt, "report").await;
    let orphan = create(&rt, "report").await;
    let now = T0.plus(rt.policy().retention.max_execution).plus(Duration::from_secs(30));
    clock.set(now);
    store.record_polls(&[(polled.clone(), now)]).await.unwrap();
    let ids = [&overdue, &polled, &orphan];
    let mut before = Vec::new();
    for id in ids {
        before.push(stored(&store, id).await);
    }

    let plan = rt.reap_plan().await.unwrap();
    let planned: Vec<_> = plan.iter().map(|p| (p.sweep, p.task.id.clone())).collect();
    assert_eq!(planned, vec![(Sweep::Timeouts, overdue.clone()), (Sweep::Orphans, orphan.clone())], "{plan:?}");
    assert!(matches!(plan[0].action, ReaperAction::FailTimeout(_)), "{plan:?}");
    assert!(matches!(&plan[1].action, ReaperAction::CancelOrphan(m) if m.contains("orphan window")), "{plan:?}");
    let mut after = Vec::new();
    for id in ids {
        after.push(stored(&store, id).await);
    }
    assert_eq!(before, after, "a plan writes nothing");

    // The pass itself does exactly what the plan said.
    let report = rt.reap_once().await.unwrap();
    assert_eq!((report.timed_out, report.orphaned), (1, 1));
    assert_eq!(stored(&store, &polled).await.status, TaskStatus::Working);
}

#[tokio::test]
async fn a_lapsed_lease_resumed_by_triage_ends_the_attempt_as_lease_lapsed() {
    let store = memory();
    let clock = clock();
    let (stalled, _gate, id) = stalled(&store, &clock, json!({})).await;
    let holder = stored(&store, &id).await.lease.unwrap().owner;
    let healthy = builder(store.clone(), &clock).tool(returning("t", json!({}))).build().unwrap();
    clock.advance(Duration::from_secs(30)); // the lease lapses
    assert_eq!(healthy.triage_once(mcp_tasks_runtime::TriageScope::ExpiredLeases).await.unwrap().resumed, 1);
    let history = store.attempts(&id).await.unwrap();
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!((history[0].attempt, history[0].outcome), (1, AttemptOutcome::LeaseLapsed));
    assert_eq!(history[0].owner.as_deref(), Some(holder.as_str()), "the dead holder is named");
    assert_eq!(history[0].started_at, None, "only the executor that claimed it knew the start");
    drop(stalled);
}
