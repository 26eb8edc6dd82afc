//! `mcp-tasks tasks` (placeholder until its issue lands).

use std::process::ExitCode;

/// Flags of `mcp-tasks tasks`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `mcp-tasks tasks`.
pub(crate) async fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcp-tasks tasks` is not built yet")
}
