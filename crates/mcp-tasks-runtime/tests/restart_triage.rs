//! Restart triage on SQLite: a new single-node runtime settles every task
//! the dead one had leased — past deadline → failed; out of attempts →
//! poison and dead-lettered; not re-runnable → failed, saying so; else
//! resumed as the next attempt.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::{Clock, TaskStatus};
use mcp_tasks_runtime::{CreateTask, ToolFailure, ToolSpec, TriageReport, TriageScope};
use mcp_tasks_store::DeadLetterQuery;
use serde_json::json;
use support::*;

/// Fails transiently while `fail_until` > attempt, then hangs (the process "dies" there).
fn hanging_tools(g: Gate) -> (std::sync::Arc<FnTool>, std::sync::Arc<FnTool>) {
    let g2 = g.clone();
    let rerun = FnTool::new("rerun", move |ctx| {
        let g = g.clone();
        async move {
            if u64::from(ctx.attempt()) < ctx.arguments()["fail_until"].as_u64().unwrap_or(0) {
                return Err(ToolFailure::transient("upstream unavailable"));
            }
            g.pass_stubbornly(&ctx).await;
            Ok(json!({}))
        }
    });
    let once = held_with_spec(once_spec(), &g2, json!({}));
    (rerun, once)
}

/// A tool that must not run twice.
fn once_spec() -> ToolSpec {
    let mut spec = ToolSpec::new("once", "charges a card");
    spec.rerunnable = false;
    spec
}

#[tokio::test]
async fn restart_triage_settles_every_leased_task() {
    let (_dir, path) = sqlite_file();
    let clock = clock();
    let (g, mut gate) = gate();
    let (rerun, once) = hanging_tools(g);
    let dead = builder(sqlite(&path), &clock).tool(rerun).tool(once).build().unwrap();

    let overdue = create(&dead, "rerun").await;
    clock.advance(Duration::from_secs(1000));
    let exhausted = dead.create_task(CreateTask::new("rerun", json!({"fail_until": 3}))).await.unwrap().record.id;
    let resumable = create(&dead, "rerun").await;
    let unsafe_ = create(&dead, "once").await;

    // Run everything; `exhausted` fails twice first and hangs on its third attempt.
    let mut hanging = 0;
    for round in 0.. {
        assert!(round < 20, "only {hanging} of 4 handlers reached the gate");
        if hanging == 4 {
            break;
        }
        dead.run_due_once().await.unwrap();
        while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(200), gate.arrived_opt()).await {
            hanging += 1;
        }
        clock.advance(Duration::from_secs(5)); // past any backoff
    }
    let r = stored(dead.store(), &exhausted).await;
    assert_eq!((r.attempt, r.max_attempts), (3, 3));
    drop(dead); // the process "dies"; its leases stay in the file

    clock.set(T0.plus(Duration::from_secs(1800))); // `overdue` is at its deadline, the rest are not
    let rerun2 = FnTool::new("rerun", |ctx| async move { Ok(json!({"attempt": ctx.attempt()})) });
    let once2 = FnTool::with_spec(once_spec(), |_ctx| async move { Ok(json!({})) });
    let restarted = builder(sqlite(&path), &clock).single_node(true).tool(rerun2.clone()).tool(once2).build().unwrap();
    let report = restarted.triage_once(TriageScope::AllLeases).await.unwrap();
    assert_eq!(report, TriageReport { resumed: 1, reasked: 0, failed: 2, poisoned: 1, cancelled: 0 });

    let get = |id| stored(restarted.store(), id);
    let r = get(&overdue).await;
    assert_eq!(r.status, TaskStatus::Failed);
    assert_eq!(r.error.unwrap().data.unwrap()["reason"], "timeout");

    let r = get(&exhausted).await;
    assert_eq!(r.status, TaskStatus::Failed);
    assert_eq!(r.error.unwrap().data.unwrap()["reason"], "poison");
    let letters = restarted.dead_letters().list(DeadLetterQuery::default()).await.unwrap();
    assert_eq!(letters.iter().map(|l| &l.task_id).collect::<Vec<_>>(), [&exhausted]);

    let r = get(&unsafe_).await;
    assert_eq!(r.status, TaskStatus::Failed);
    let message = r.error.unwrap().message;
    assert!(message.contains("not safe to re-run") && message.contains("once"), "{message}");

    let r = get(&resumable).await;
    assert_eq!((r.status, r.attempt, r.lease.clone(), r.run_at), (TaskStatus::Working, 2, None, Some(clock.now())));
    assert_eq!(run_settled(&restarted).await, 1);
    let r = get(&resumable).await;
    assert_eq!((r.status, r.result), (TaskStatus::Completed, Some(json!({"attempt": 2}))));
    assert_eq!(rerun2.runs(), 1);
}
