//! `pollIntervalMs` follows the tool's expected duration (not a constant), and
//! stays within the policy's bounds.

mod common;

use std::time::Duration;

use async_trait::async_trait;
use common::*;
use mcp_tasks_server::{Execution, TaskContext, TaskTool, ToolFailure, ToolSpec};
use serde_json::{Value, json};

struct Declared(&'static str, Duration);

#[async_trait]
impl TaskTool for Declared {
    fn spec(&self) -> ToolSpec {
        ToolSpec { expected_duration: Some(self.1), execution: Execution::TaskRequired, ..ToolSpec::new(self.0, "waits") }
    }
    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        ctx.sleep(Duration::from_secs(3600)).await.map_err(|_| ToolFailure::permanent("stopped"))?;
        Ok(json!({"content": []}))
    }
}

#[tokio::test]
async fn the_hint_grows_with_the_expected_duration() {
    let h = start_with(|b| {
        b.tool(Declared("one_minute", Duration::from_secs(60))).tool(Declared("ten_minutes", Duration::from_secs(600)))
    })
    .await;
    let c = client(&h.url).await;
    let short = create(&c, "one_minute", json!({})).await.task.poll_interval_ms.unwrap();
    let long = create(&c, "ten_minutes", json!({})).await.task.poll_interval_ms.unwrap();
    let hint = &h.server.runtime().policy().poll_hint;
    assert_eq!(short, hint.hint_for(Some(Duration::from_secs(60))).as_millis() as u64);
    assert_eq!(long, hint.hint_for(Some(Duration::from_secs(600))).as_millis() as u64);
    assert!(long > short, "{long} vs {short}");
    h.stop().await;
}
