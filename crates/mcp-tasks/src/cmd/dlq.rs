//! `mcp-tasks dlq`: inspect and act on the dead-letter queue.
//!
//! Exit codes: 0 done; 1 no such dead letter (`show`, `requeue`); 2
//! anything else (no database at the path, a bad flag, a letter already
//! requeued, an unreadable store).

use std::process::ExitCode;

use anyhow::Context;
use mcp_tasks_core::{Policy, TaskId, Timestamp};
use mcp_tasks_runtime::{Runtime, RuntimeError};
use mcp_tasks_store::{DeadLetter, DeadLetterQuery, PurgeQuery, StoreError};

use super::inspect::{EXIT_NOT_FOUND, InspectArgs, ListFlags, key_values, one_line, or_dash, print_json, print_one, when};
use super::instant_arg::parse_instant;
use super::policy_args::PolicyArgs;

/// Flags of `mcp-tasks dlq`.
pub(crate) type Args = InspectArgs<Command>;

/// The subcommands of `mcp-tasks dlq`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// List dead letters, newest first (not yet requeued, unless --all).
    List {
        /// Only letters of this tool.
        #[arg(long, value_name = "T")]
        tool: Option<String>,
        /// Include letters already requeued.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        flags: ListFlags,
    },
    /// Show one dead letter in full.
    Show {
        /// The dead-lettered task's id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a dead-lettered call again as a fresh task (new id, a fresh
    /// attempt budget and deadline from the policy flags, as `serve` reads them).
    Requeue {
        /// The dead-lettered task's id.
        id: String,
        /// Print the new task record as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Delete dead letters: all of them, the given ones, or those dead before an instant.
    #[command(group(clap::ArgGroup::new("which").required(true).args(["all", "ids", "before"])))]
    Purge {
        /// Every dead letter (of --tool, if given).
        #[arg(long)]
        all: bool,
        /// These dead-lettered tasks.
        #[arg(value_name = "ID")]
        ids: Vec<String>,
        /// Those dead before this instant: RFC 3339 (2026-07-28T00:00:00Z), an
        /// age such as 2h or 30m (that long ago), today or yesterday (midnight UTC).
        #[arg(long, value_name = "WHEN", value_parser = parse_instant)]
        before: Option<Timestamp>,
        /// Only letters of this tool.
        #[arg(long, value_name = "T")]
        tool: Option<String>,
    },
}

/// Runs `mcp-tasks dlq`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let policy = match &args.command {
        Command::Requeue { policy, .. } => policy.policy()?,
        _ => Policy::default(),
    };
    let store = args.db.open().await?;
    // A runtime with no tools: it never runs anything, it only carries the
    // policy's attempt budget and the dead-letter operations.
    let runtime = Runtime::builder(store).policy(policy).build().context("building the runtime")?;
    let dlq = runtime.dead_letters();
    let not_found = |id: &str| {
        eprintln!("error: no dead letter for task {id} in {}", args.db.location());
        Ok(ExitCode::from(EXIT_NOT_FOUND))
    };
    match args.command {
        Command::List { tool, all, flags } => {
            let letters = dlq.list(DeadLetterQuery { tool, include_requeued: all, limit: flags.limit() }).await?;
            let header = ["TASK", "TOOL", "ATTEMPTS", "DEAD AT", "REQUEUED AS", "REASON"];
            flags.print(&letters, "no dead letters", &header, list_row)?;
        }
        Command::Show { id, json } => match dlq.show(&TaskId(id.clone())).await {
            Ok(letter) => print_one(&letter, json, details)?,
            Err(RuntimeError::Store(StoreError::DeadLetterNotFound(_))) => return not_found(&id),
            Err(e) => return Err(e.into()),
        },
        Command::Requeue { id, json, .. } => match dlq.requeue(&TaskId(id.clone())).await {
            Ok(view) if json => print_json(&view.record)?,
            Ok(view) => println!("requeued {id} as task {}", view.record.id),
            Err(RuntimeError::Store(StoreError::DeadLetterNotFound(_))) => return not_found(&id),
            Err(e) => return Err(e.into()),
        },
        Command::Purge { all, ids, before, tool } => {
            let task_ids = (!all && !ids.is_empty()).then(|| ids.into_iter().map(TaskId).collect());
            let n = dlq.purge(PurgeQuery { task_ids, dead_before: before, tool }).await?;
            println!("purged {n} dead letter{}", if n == 1 { "" } else { "s" });
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list_row(l: &DeadLetter) -> Vec<String> {
    vec![
        l.task_id.to_string(),
        l.tool.clone(),
        l.attempts.to_string(),
        when(l.dead_at),
        or_dash(l.requeued_as.as_ref()),
        one_line(&l.reason, 60),
    ]
}

fn details(l: &DeadLetter) -> String {
    key_values(&[
        ("task", l.task_id.to_string()),
        ("tool", l.tool.clone()),
        ("principal", or_dash(l.principal.as_ref())),
        ("attempts", l.attempts.to_string()),
        ("dead at", when(l.dead_at)),
        ("reason", l.reason.clone()),
        ("error", serde_json::to_string(&l.error).unwrap_or_default()),
        ("arguments", l.arguments.to_string()),
        ("requeued as", or_dash(l.requeued_as.as_ref())),
    ])
}
