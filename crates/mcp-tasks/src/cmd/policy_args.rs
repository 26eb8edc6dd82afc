//! The policy flags `serve`, `dlq requeue` and `reap` share, so a requeued
//! task gets the attempt budget and deadline the server is configured with,
//! and an operator's reaper pass enforces the server's windows.

use std::path::PathBuf;
use std::time::Duration;

use mcp_tasks_core::Policy;

use super::config_file::{load_policy, parse_duration};

/// Policy flags. Each has an `MCP_TASKS_*` environment equivalent; flags
/// override the `--config` file, which overrides defaults.
#[derive(Debug, clap::Args)]
pub(crate) struct PolicyArgs {
    /// A policy file (TOML, or JSON if it ends in .json) with any fields of the policy.
    #[arg(long, env = "MCP_TASKS_CONFIG")]
    config: Option<PathBuf>,
    /// How long finished tasks (completed, failed, cancelled) are kept, e.g. 1h.
    #[arg(long, env = "MCP_TASKS_RETENTION", value_parser = parse_duration)]
    retention: Option<Duration>,
    /// A live task nobody polls for this long is presumed abandoned and cancelled, e.g. 15m.
    #[arg(long, env = "MCP_TASKS_ORPHAN_WINDOW", value_parser = parse_duration)]
    orphan_window: Option<Duration>,
    /// Share of the orphan window (0 to 0.5) a stored poll instant may trail
    /// the last poll by: polls of a task seen more recently write nothing,
    /// and orphans are cancelled this much later. 0 writes every poll.
    #[arg(long, env = "MCP_TASKS_POLL_SLACK_SHARE")]
    poll_slack_share: Option<f64>,
    /// A task must finish this long after creation or it fails, e.g. 30m.
    #[arg(long, env = "MCP_TASKS_MAX_EXECUTION", value_parser = parse_duration)]
    max_execution: Option<Duration>,
    /// Total attempts per task, the first included.
    #[arg(long, env = "MCP_TASKS_MAX_ATTEMPTS")]
    max_attempts: Option<u32>,
    /// First retry backoff cap, e.g. 500ms.
    #[arg(long, env = "MCP_TASKS_RETRY_BASE", value_parser = parse_duration)]
    retry_base: Option<Duration>,
    /// Largest retry backoff, e.g. 30s.
    #[arg(long, env = "MCP_TASKS_RETRY_MAX", value_parser = parse_duration)]
    retry_max: Option<Duration>,
    /// How often the reaper sweeps, e.g. 30s.
    #[arg(long, env = "MCP_TASKS_REAPER_INTERVAL", value_parser = parse_duration)]
    reaper_interval: Option<Duration>,
}

impl PolicyArgs {
    /// The policy: defaults, then the config file, then flags; validated.
    pub(crate) fn policy(&self) -> anyhow::Result<Policy> {
        let p = self.unchecked_policy()?;
        p.validate().map_err(|problem| anyhow::anyhow!("invalid policy: {problem}"))?;
        Ok(p)
    }

    /// The policy: defaults, then the config file, then flags; not validated
    /// (for `check`, which reports every problem rather than the first).
    pub(crate) fn unchecked_policy(&self) -> anyhow::Result<Policy> {
        let mut p = match &self.config {
            Some(path) => load_policy(path)?,
            None => Policy::default(),
        };
        if let Some(d) = self.retention {
            p.retention.completed = d;
            p.retention.failed = d;
            p.retention.cancelled = d;
        }
        if let Some(d) = self.orphan_window {
            p.retention.orphan_after = d;
        }
        if let Some(share) = self.poll_slack_share {
            p.retention.poll_slack_share = share;
        }
        if let Some(d) = self.max_execution {
            p.retention.max_execution = d;
        }
        if let Some(n) = self.max_attempts {
            p.retry.max_attempts = n;
        }
        if let Some(d) = self.retry_base {
            p.retry.base_delay = d;
        }
        if let Some(d) = self.retry_max {
            p.retry.max_delay = d;
        }
        if let Some(d) = self.reaper_interval {
            p.reaper_interval = d;
        }
        Ok(p)
    }
}
