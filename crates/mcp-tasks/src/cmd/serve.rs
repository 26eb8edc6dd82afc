//! `mcp-tasks serve` (placeholder until its issue lands).

use std::process::ExitCode;

/// Flags of `mcp-tasks serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `mcp-tasks serve`.
pub(crate) async fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcp-tasks serve` is not built yet")
}
