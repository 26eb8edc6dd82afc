//! `mcp-tasks study` (placeholder until its issue lands).

use std::process::ExitCode;

/// Flags of `mcp-tasks study`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `mcp-tasks study`.
pub(crate) async fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcp-tasks study` is not built yet")
}
