//! Run with: cargo run -p mcp-tasks-server --example custom_tool
//!
//! Adds one durable task tool to an MCP server in a few lines. Then, from
//! another terminal: `mcp-tasks call http://127.0.0.1:8080/mcp word_count --args '{"text": "a b c"}'`.
//!
//! The task survives a restart of this process: its state lives in
//! `custom-tool.db`; a task that was running when the process died is
//! triaged at the next start and re-run (the tool is re-runnable).

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_server::tools::support::{stopped, text_result};
use mcp_tasks_server::{Execution, TaskContext, TaskServer, TaskTool, ToolFailure, ToolSpec};
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
        let text = ctx.arguments()["text"].as_str().ok_or_else(|| ToolFailure::permanent("invalid: text must be a string"))?;
        ctx.set_status_message("counting").await.map_err(|e| ToolFailure::transient(e.to_string()))?;
        ctx.sleep(Duration::from_secs(3)).await.map_err(stopped)?;
        Ok(text_result(format!("{} words", text.split_whitespace().count())))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = Arc::new(mcp_tasks_sqlite::SqliteStore::open("custom-tool.db")?);
    let server = TaskServer::builder(store).tool(WordCount).single_node(true).build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    eprintln!("word_count served at http://{}/mcp (Ctrl-C stops)", listener.local_addr()?);
    server.serve(listener, async { let _ = tokio::signal::ctrl_c().await; }).await?;
    Ok(())
}
