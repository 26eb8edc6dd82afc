//! Durable tasks dropped into an existing rmcp server: a `ServerHandler`
//! with `#[tool_router]` tools, a prompt and a resource, wrapped with
//! `DurableTasks::wrap`, over real HTTP with the real rmcp client.
//!
//! - Its plain tools, prompt and resource answer byte for byte as the same
//!   handler served without mcp-tasks; its `get_info` is kept, with the tasks
//!   extension added.
//! - The durable tool returns a task that completes; a client without the
//!   tasks extension gets it inline.
//! - In a real child process (the `mixed_server` example), a running task
//!   survives SIGKILL of the server and completes after a restart.

use crate::examples_support;
use crate::rmcp_app;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResponse, ErrorCode, GetPromptRequestParams, GetTaskResult, ReadResourceRequestParams, TaskStatus,
};
use rmcp_app::*;
use serde_json::json;

/// Polls `tasks/get` until the task is terminal (at most `within` of real time).
async fn poll_to_end(client: &Client, id: &str, within: Duration) -> GetTaskResult {
    let deadline = Instant::now() + within;
    loop {
        let got = get(client, id).await.unwrap();
        if got.task.status().is_terminal() {
            return got;
        }
        assert!(Instant::now() < deadline, "task {id} did not finish; last seen {got:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn plain_tools_prompts_and_resources_answer_exactly_as_without_mcp_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = durable_tasks(dir.path());
    tasks.start().await.unwrap();
    let plain_url = serve(Notes::new).await;
    let durable_url = serve({
        let tasks = tasks.clone();
        move || tasks.wrap(Notes::new())
    })
    .await;
    let plain = client(&plain_url, true).await;
    let durable = client(&durable_url, true).await;

    // Tools: a result, an error, rmcp's own argument check.
    for (tool, args) in [("add", json!({"a": 2, "b": 3})), ("broken", json!({})), ("add", json!({"a": "two"}))] {
        let without = call(&plain, tool, args.clone()).await.map(|r| response_wire(&r)).map_err(|e| wire(&e));
        let with = call(&durable, tool, args.clone()).await.map(|r| response_wire(&r)).map_err(|e| wire(&e));
        assert_eq!(with, without, "{tool} {args}");
    }
    assert_eq!(response_wire(&call(&durable, "add", json!({"a": 2, "b": 3})).await.unwrap())["content"][0]["text"], "5");

    // Prompts.
    let mut args = serde_json::Map::new();
    args.insert("text".into(), json!("a long text"));
    let prompt = || GetPromptRequestParams::new("summarize").with_arguments(args.clone());
    assert_eq!(wire(&durable.list_prompts(None).await.unwrap()), wire(&plain.list_prompts(None).await.unwrap()));
    let with = wire(&durable.get_prompt(prompt()).await.unwrap());
    assert_eq!(with, wire(&plain.get_prompt(prompt()).await.unwrap()));
    assert!(with["messages"][0]["content"]["text"].as_str().unwrap().contains("a long text"), "{with}");

    // Resources, found and not found.
    assert_eq!(wire(&durable.list_resources(None).await.unwrap()), wire(&plain.list_resources(None).await.unwrap()));
    let read = |uri: &str| ReadResourceRequestParams::new(uri);
    assert_eq!(
        wire(&durable.read_resource(read(README_URI)).await.unwrap()),
        wire(&plain.read_resource(read(README_URI)).await.unwrap())
    );
    let missing_with = mcp_error(durable.read_resource(read("notes://nope")).await.unwrap_err());
    let missing_without = mcp_error(plain.read_resource(read("notes://nope")).await.unwrap_err());
    assert_eq!(wire(&missing_with), wire(&missing_without));

    // The listing: the handler's tools unchanged, the durable one added.
    let without: Vec<_> = plain.list_all_tools().await.unwrap();
    let with: Vec<_> = durable.list_all_tools().await.unwrap();
    assert_eq!(with.len(), without.len() + 1, "{with:?}");
    for tool in &without {
        assert_eq!(Some(wire(tool)), with.iter().find(|t| t.name == tool.name).map(wire), "{}", tool.name);
    }
    let report = with.iter().find(|t| t.name == "build_report").expect("the durable tool is listed");
    assert!(report.output_schema.is_some(), "a typed result has an outputSchema");

    // get_info kept; the tasks extension added.
    let info = durable.peer_info().expect("discovered");
    let plain_info = plain.peer_info().expect("discovered");
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("notes"));
    assert_eq!(info.instructions, plain_info.instructions);
    assert!(info.capabilities.supports_tasks(), "{:?}", info.capabilities);
    assert!(!plain_info.capabilities.supports_tasks());
    assert_eq!(info.capabilities.prompts, plain_info.capabilities.prompts);
    assert_eq!(info.capabilities.resources, plain_info.capabilities.resources);

    // tasks/* come from mcp-tasks: the plain handler has none.
    assert_eq!(get(&plain, "x").await.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
    let unknown = get(&durable, "x").await.unwrap_err();
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS, "{unknown:?}");

    // The durable tool: a task (with the orphan window), then its typed result.
    let created = match call(&durable, "build_report", json!({"topic": "Q3", "sections": 2})).await.unwrap() {
        CallToolResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    };
    assert!(wire(&created)["_meta"][mcp_tasks_server::ORPHAN_WINDOW_META_KEY].is_u64(), "{}", wire(&created));
    let done = poll_to_end(&durable, &created.task.task_id, Duration::from_secs(10)).await;
    assert_eq!(done.task.status(), TaskStatus::Completed, "{done:?}");
    let result = wire(&done);
    assert_eq!(result["result"]["structuredContent"]["sections"][1], "Q3: section 2", "{result}");

    // A client without the tasks extension gets it inline (the tool is task-optional).
    let inline = client(&durable_url, false).await;
    match call(&inline, "build_report", json!({"topic": "Q4", "sections": 1})).await.unwrap() {
        CallToolResponse::Complete(result) => {
            assert_eq!(wire(&result)["structuredContent"]["topic"], "Q4")
        }
        other => panic!("expected a result inline, got {other:?}"),
    }
    tasks.shutdown(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_durable_task_survives_sigkill_of_the_server_process_and_completes_after_restart() {
    let binary = examples_support::example_binary("mixed_server");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let args = ["--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()];

    let server = examples_support::start(&binary, &args, dir.path());
    let c = client(&server.url, true).await;
    // Plain tools keep working in the wrapped server.
    assert_eq!(response_wire(&call(&c, "add", json!({"a": 40, "b": 2})).await.unwrap())["content"][0]["text"], "42");
    let created =
        match call(&c, "build_report", json!({"topic": "crash", "sections": 3, "ms_per_section": 500})).await.unwrap() {
            CallToolResponse::Task(task) => task,
            other => panic!("expected a task, got {other:?}"),
        };
    let id = created.task.task_id.clone();
    // Wait until its handler runs (it has written a status message), then SIGKILL.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = get(&c, &id).await.unwrap();
        if got.task.task.status_message.as_deref().is_some_and(|m| m.starts_with("writing section")) {
            break;
        }
        assert!(!got.task.status().is_terminal(), "finished before the kill: {got:?}");
        assert!(Instant::now() < deadline, "the task never started: {got:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(c);
    server.kill_9();

    // A new process on the same file: triage resumes the task, which completes.
    let restarted = examples_support::start(&binary, &args, dir.path());
    let c = client(&restarted.url, true).await;
    let done = poll_to_end(&c, &id, Duration::from_secs(30)).await;
    assert_eq!(done.task.status(), TaskStatus::Completed, "{done:?}");
    let result = wire(&done);
    let report = &result["result"]["structuredContent"];
    assert_eq!(report["sections"].as_array().map(Vec::len), Some(3), "{result}");
    assert_eq!(report["attempt"], 2, "the restart ran it again as attempt 2: {result}");
}
