//! Every server example builds, starts, says where it listens in its first
//! line of output, serves its tools to the real rmcp client, and runs a
//! durable task to its end.

use crate::examples_support;
use crate::rmcp_app;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResponse, TaskStatus, UpdateTaskParams};
use rmcp_app::*;
use serde_json::{Value, json};

/// A started example, its working directory and a client.
struct Example {
    running: examples_support::Running,
    _dir: tempfile::TempDir,
    client: Client,
}

/// Starts example `name`, checks its first line, that it advertises the
/// tasks extension and lists `expected_tools`.
async fn start_example(name: &str, expected_tools: &[&str]) -> Example {
    let binary = examples_support::example_binary(name);
    let dir = tempfile::tempdir().unwrap();
    let running = examples_support::start(&binary, &["--listen", "127.0.0.1:0"], dir.path());
    assert!(running.first_line.starts_with("listening on http://127.0.0.1:"), "{name}: {:?}", running.first_line);
    let c = client(&running.url, true).await;
    let tools: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    for expected in expected_tools {
        assert!(tools.iter().any(|t| t == expected), "{name} lists {tools:?}, not {expected}");
    }
    assert!(c.peer_info().unwrap().capabilities.supports_tasks(), "{name} advertises the tasks extension");
    Example { running, _dir: dir, client: c }
}

/// Starts `tool` as a task and returns its id.
async fn start_task(c: &Client, tool: &str, arguments: Value) -> String {
    match call(c, tool, arguments).await.unwrap() {
        CallToolResponse::Task(task) => task.task.task_id,
        other => panic!("expected a task from {tool}, got {other:?}"),
    }
}

/// Polls until the task has `status` (at most 20 s) and returns its wire form.
async fn poll_to(c: &Client, id: &str, status: TaskStatus) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = get(c, id).await.unwrap();
        if got.task.status() == status {
            return wire(&got);
        }
        assert!(!got.task.status().is_terminal(), "ended otherwise: {got:?}");
        assert!(Instant::now() < deadline, "never got to {status:?}: {got:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts example `name` and runs `tool` with `arguments` to completion.
async fn run_example(name: &str, expected_tools: &[&str], tool: &str, arguments: Value) -> Value {
    let example = start_example(name, expected_tools).await;
    let id = start_task(&example.client, tool, arguments).await;
    poll_to(&example.client, &id, TaskStatus::Completed).await
}

#[tokio::test]
async fn the_rmcp_task_demo_rewritten_with_durable_tasks_runs() {
    let done = run_example("durable_task_demo", &["slow_sum", "quick_echo"], "slow_sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(done["result"]["content"][0]["text"], "42", "{done}");
}

#[tokio::test]
async fn the_mixed_server_runs_and_its_second_durable_tool_asks_for_input() {
    let example = start_example("mixed_server", &["add", "echo", "build_report", "approve_deploy"]).await;
    let c = &example.client;
    let id = start_task(c, "build_report", json!({"topic": "CI", "sections": 2, "ms_per_section": 10})).await;
    let done = poll_to(c, &id, TaskStatus::Completed).await;
    assert_eq!(done["result"]["structuredContent"]["sections"][1], "CI: section 2", "{done}");

    let id = start_task(c, "approve_deploy", json!({"service": "billing"})).await;
    let waiting = poll_to(c, &id, TaskStatus::InputRequired).await;
    assert_eq!(waiting["inputRequests"]["approval"]["params"]["message"], "Deploy billing?", "{waiting}");
    let answer = BTreeMap::from([("approval".to_owned(), json!({"action": "accept", "content": {"approve": true}}))]);
    c.peer().update_task(UpdateTaskParams::new(id.clone(), answer)).await.unwrap();
    let done = poll_to(c, &id, TaskStatus::Completed).await;
    assert_eq!(done["result"]["content"][0]["text"], "billing deployed", "{done}");

    // A task-required tool, called by a client that did not declare the tasks extension: -32021.
    let plain = client(&example.running.url, false).await;
    let e = call(&plain, "approve_deploy", json!({"service": "billing"})).await.unwrap_err();
    assert_eq!(e.code.0, -32021, "{e:?}");
    // Its plain tools answer it as usual.
    assert_eq!(response_wire(&call(&plain, "echo", json!({"message": "hi"})).await.unwrap())["content"][0]["text"], "hi");
}

#[tokio::test]
async fn the_stand_alone_server_runs() {
    let done = run_example("custom_tool", &["word_count", "shout"], "shout", json!({"text": "durable"})).await;
    assert_eq!(done["result"]["content"][0]["text"], "DURABLE", "{done}");
}
