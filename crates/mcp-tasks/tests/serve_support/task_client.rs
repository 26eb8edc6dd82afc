//! A library client for the process tests: fast polling, a fixed jitter seed,
//! and the two things every test does with it (start a task, wait for a state).
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use mcp_tasks_client::rmcp::model::GetTaskResult;
use mcp_tasks_client::{ClientOptions, DeclineAll, Silent, Started, TasksClient};
use mcp_tasks_core::PollPolicy;
use serde_json::Value;

/// Options polling every 5–100 ms with `seed` for the jitter, so a test sees
/// a state soon after it is reached and replays the same schedule.
pub fn fast_options(url: &str, seed: u64) -> ClientOptions {
    let mut o = ClientOptions::new(url);
    o.poll = PollPolicy { initial_ms: 5.0, max_ms: 100.0, ..PollPolicy::default() };
    o.jitter_seed = Some(seed);
    o
}

/// Calls `tool` and returns its task's id; panics if the call did not become a task.
pub async fn start_task(client: &TasksClient, tool: &str, args: Value) -> String {
    match client.start(tool, args, &DeclineAll, &Silent).await.unwrap() {
        Started::Task(handle) => handle.task_id,
        other => panic!("{tool} did not become a task: {other:?}"),
    }
}

/// Polls task `id` until `done` holds (at most 30 s, or the test fails).
pub async fn wait_for_task(client: &TasksClient, id: &str, done: impl Fn(&GetTaskResult) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got = client.get(id).await.unwrap();
        if done(&got) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "task {id}: {got:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
