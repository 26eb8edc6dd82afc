// Run with: cargo run -p mcp-tasks-server --example custom_tool -- --listen 127.0.0.1:8080
//
//! The stand-alone server: a durable task tool behind an MCP endpoint in a
//! few lines, for a project that has no rmcp handler of its own (one that
//! has uses `DurableTasks::wrap`, see `mixed_server.rs`). `word_count` is
//! written against the raw `TaskTool` seam (JSON arguments, a hand-written
//! schema); `shout` is typed. Then, from another terminal:
//! `mcp-tasks call http://127.0.0.1:8080/mcp word_count --args '{"text": "a b c"}'`.
//!
//! The task survives a restart of this process: its state lives in
//! `custom-tool.db`; a task that was running when the process died is
//! triaged at the next start and re-run (the tool is re-runnable).

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_server::{Execution, TaskContext, TaskServer, TaskTool, ToolFailure, ToolSpec};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// Counts the words of `text`, slowly, reporting progress.
struct WordCount;

#[async_trait::async_trait]
impl TaskTool for WordCount {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            expected_duration: Some(Duration::from_secs(3)),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("word_count", "Counts the words of a text (slowly, as a durable task).")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        // The schema was checked before the task was created.
        let text = ctx.arguments()["text"].as_str().unwrap_or_default().to_owned();
        ctx.set_status_message("counting").await?;
        ctx.sleep(Duration::from_secs(3)).await?;
        let result = CallToolResult::success(vec![ContentBlock::text(format!("{} words", text.split_whitespace().count()))]);
        Ok(serde_json::to_value(result).unwrap_or_default())
    }
}

/// Arguments of `shout`.
#[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
struct ShoutArgs {
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listen = std::env::args().skip_while(|a| a != "--listen").nth(1).unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let store =
        Arc::new(mcp_tasks_sqlite::SqliteStore::open_with("custom-tool.db", mcp_tasks_sqlite::SqliteOptions::serving())?);
    let server = TaskServer::builder(store)
        .tool(WordCount)
        .task("shout", "Upper-cases a text (as a durable task)", |args: ShoutArgs, _ctx: TaskContext| async move {
            Ok::<_, ToolFailure>(args.text.to_uppercase())
        })
        .single_node(true)
        .build()?;
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on http://{}/mcp (Ctrl-C stops)", listener.local_addr()?);
    server
        .serve(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
