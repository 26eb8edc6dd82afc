//! `mcp-tasks dlq` (placeholder until its issue lands).

use std::process::ExitCode;

/// Flags of `mcp-tasks dlq`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `mcp-tasks dlq`.
pub(crate) async fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcp-tasks dlq` is not built yet")
}
