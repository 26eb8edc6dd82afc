//! `mcp-tasks backup`: a consistent copy of a live task database, taken
//! beside a running server (no need to stop it).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use mcp_tasks_sqlite::SqliteStore;

use super::inspect::DbArg;

/// Flags of `mcp-tasks backup`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    db: DbArg,
    /// The backup file to write (must not exist yet).
    #[arg(long, value_name = "PATH")]
    to: PathBuf,
}

/// Runs `mcp-tasks backup`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let db = &args.db.path;
    if !db.exists() {
        bail!("no task database at {} (pass --db PATH or set MCP_TASKS_DB)", db.display());
    }
    // Without the serving lock: a backup runs beside the server.
    let store = SqliteStore::open(db).with_context(|| format!("opening {}", db.display()))?;
    store.backup_to(&args.to).await.with_context(|| format!("backing up {} to {}", db.display(), args.to.display()))?;
    println!("backed up {} to {}", db.display(), args.to.display());
    Ok(ExitCode::SUCCESS)
}
