//! `mcp-tasks call` (placeholder until its issue lands).

use std::process::ExitCode;

/// Flags of `mcp-tasks call`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `mcp-tasks call`.
pub(crate) async fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcp-tasks call` is not built yet")
}
