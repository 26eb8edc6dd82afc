//! The orphan window is inclusive: a task unpolled for exactly the window
//! (plus the poll slack) is cancelled, one polled a millisecond later is
//! not. Buffered polls are flushed before the sweep reads. A poll within the
//! slack of the task's stored last-seen instant writes nothing, and still
//! keeps the task from being cancelled before a whole window of silence;
//! a poll of a finished task writes nothing at all.

use crate::support;
use std::time::Duration;

use mcp_tasks_core::{Policy, TaskStatus, Timestamp};
use serde_json::json;
use support::*;

/// The default policy without poll slack: every poll written, orphans at
/// exactly the window.
fn exact() -> Policy {
    let mut policy = Policy::default();
    policy.retention.poll_slack_share = 0.0;
    policy
}

#[tokio::test]
async fn orphan_cancel_is_inclusive_at_exactly_the_window() {
    let clock = clock();
    let rt = builder(memory(), &clock).policy(exact()).tool(returning("t", json!({}))).build().unwrap();
    let silent = create(&rt, "t").await;
    clock.advance(Duration::from_millis(1));
    let polled = create(&rt, "t").await;

    clock.advance(Duration::from_millis(899_998)); // T0 + 899.999 s
    rt.get_task(&polled, None).await.unwrap(); // buffered, not yet written
    assert_eq!(rt.reap_once().await.unwrap().orphaned, 0, "one millisecond short of the window");

    clock.advance(Duration::from_millis(1)); // exactly 900 s after `silent` was created
    let report = rt.reap_once().await.unwrap();
    assert_eq!(report.orphaned, 1);
    let r = rt.store().get(&silent).await.unwrap().unwrap();
    assert_eq!(r.status, TaskStatus::Cancelled);
    assert!(r.status_message.unwrap().contains("no client polled"));
    assert_eq!(status(&rt, &polled).await, TaskStatus::Working, "its poll was flushed before the sweep");
}

#[tokio::test]
async fn a_fresh_runtime_does_not_read_lost_polls_as_abandonment() {
    let clock = clock();
    let store = memory();
    let mut policy = exact();
    policy.retention.max_execution = Duration::from_secs(7200); // keep the deadline out of the way
    let first = builder(store.clone(), &clock).policy(policy.clone()).tool(returning("t", json!({}))).build().unwrap();
    let id = create(&first, "t").await;
    clock.advance(Duration::from_secs(800));
    first.get_task(&id, None).await.unwrap(); // lost: the process "dies" before flushing
    drop(first);

    clock.advance(Duration::from_secs(200)); // 1000 s since creation, 200 s since the lost poll
    let second = builder(store, &clock).policy(policy).tool(returning("t", json!({}))).build().unwrap();
    assert_eq!(second.reap_once().await.unwrap().orphaned, 0, "silence is measured from this runtime's start");
    clock.advance(Duration::from_secs(899));
    assert_eq!(second.reap_once().await.unwrap().orphaned, 0);
    clock.advance(Duration::from_secs(1));
    assert_eq!(second.reap_once().await.unwrap().orphaned, 1, "a full window watched by this runtime");
}

#[tokio::test]
async fn a_poll_within_the_slack_writes_nothing_and_one_past_it_does() {
    let clock = clock();
    let rt = builder(memory(), &clock).tool(returning("t", json!({}))).build().unwrap();
    let slack = Policy::default().retention.poll_slack();
    assert_eq!(slack, Duration::from_millis(112_500), "an eighth of the default 900 s window");
    let id = create(&rt, "t").await;
    let created = clock_now(&clock);

    clock.advance(slack - Duration::from_millis(1));
    rt.get_task(&id, None).await.unwrap();
    rt.reap_once().await.unwrap(); // flushes what was buffered
    assert_eq!(stored_poll(&rt, &id).await, None, "seen (created) less than the slack ago: not written");

    clock.advance(Duration::from_millis(1));
    rt.get_task(&id, None).await.unwrap();
    rt.reap_once().await.unwrap();
    assert_eq!(stored_poll(&rt, &id).await, Some(created.plus(slack)), "the slack reached: written");

    clock.advance(Duration::from_secs(5));
    rt.get_task(&id, None).await.unwrap();
    rt.reap_once().await.unwrap();
    assert_eq!(stored_poll(&rt, &id).await, Some(created.plus(slack)), "seen 5 s ago: not written again");
}

#[tokio::test]
async fn a_poll_of_a_finished_task_writes_nothing() {
    // No slack: only the status keeps the finished task's poll unwritten.
    let clock = clock();
    let rt = builder(memory(), &clock).policy(exact()).tool(returning("t", json!({}))).build().unwrap();
    let finished = create(&rt, "t").await;
    run_settled(&rt).await;
    assert_eq!(status(&rt, &finished).await, TaskStatus::Completed);
    let live = create(&rt, "t").await; // queued: nothing runs it

    clock.advance(Duration::from_secs(1));
    rt.get_task(&finished, None).await.unwrap();
    rt.get_task(&live, None).await.unwrap();
    rt.reap_once().await.unwrap(); // flushes what was buffered
    assert_eq!(stored_poll(&rt, &finished).await, None, "nothing left to orphan: not written");
    assert_eq!(stored_poll(&rt, &live).await, Some(clock_now(&clock)), "a live task's poll is written");
}

#[tokio::test]
async fn an_unwritten_poll_still_holds_off_the_orphan_sweep_for_a_whole_window() {
    let clock = clock();
    let mut policy = Policy::default();
    policy.retention.max_execution = Duration::from_secs(7200); // keep the deadline out of the way
    let window = policy.retention.orphan_after;
    let slack = policy.retention.poll_slack();
    let rt = builder(memory(), &clock).policy(policy).tool(returning("t", json!({}))).build().unwrap();
    let id = create(&rt, "t").await;
    let created = clock_now(&clock);

    clock.advance(Duration::from_secs(100)); // within the slack: not written
    rt.get_task(&id, None).await.unwrap();
    let polled = clock_now(&clock);
    rt.reap_once().await.unwrap();
    assert_eq!(stored_poll(&rt, &id).await, None);

    // One millisecond short of a whole window since the (unwritten) poll.
    clock.set(polled.plus(window).minus(Duration::from_millis(1)));
    assert_eq!(rt.reap_once().await.unwrap().orphaned, 0, "the client polled less than a window ago");
    // The stored instant (creation) plus the window and the slack: cancelled.
    clock.set(created.plus(window).plus(slack).minus(Duration::from_millis(1)));
    assert_eq!(rt.reap_once().await.unwrap().orphaned, 0);
    clock.advance(Duration::from_millis(1));
    assert_eq!(rt.reap_once().await.unwrap().orphaned, 1, "silent for the window and the slack");
    assert_eq!(status(&rt, &id).await, TaskStatus::Cancelled);
}

fn clock_now(clock: &mcp_tasks_core::ManualClock) -> Timestamp {
    use mcp_tasks_core::Clock;
    clock.now()
}

async fn stored_poll(rt: &mcp_tasks_runtime::Runtime, id: &mcp_tasks_core::TaskId) -> Option<Timestamp> {
    rt.store().get(id).await.unwrap().unwrap().last_polled_at
}
