//! `pollIntervalMs` follows the tool's expected duration (not a constant), and
//! stays within the policy's bounds.

use crate::common;
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
        b.tool(Declared("one_second", Duration::from_secs(1)))
            .tool(Declared("one_minute", Duration::from_secs(60)))
            .tool(Declared("ten_minutes", Duration::from_secs(600)))
            .tool(Declared("a_day", Duration::from_secs(100_000)))
    })
    .await;
    let c = client(&h.url).await;
    let hint = |tool: &'static str| {
        let c = &c;
        async move { create(c, tool, json!({})).await.task.poll_interval_ms.unwrap() }
    };
    // The default policy: 2 % of the expected duration, within [250 ms, 60 s].
    assert_eq!(hint("one_minute").await, 1_200);
    assert_eq!(hint("ten_minutes").await, 12_000);
    assert_eq!(hint("one_second").await, 250, "never below the floor");
    assert_eq!(hint("a_day").await, 60_000, "never above the ceiling");
    h.stop().await;
}
