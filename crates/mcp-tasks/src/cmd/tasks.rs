//! `mcp-tasks tasks`: inspect the tasks in a store, and cancel one.
//!
//! Task ids may be given whole or as any unambiguous prefix.
//!
//! Exit codes: 0 done; 1 no such task (`show`, `cancel`); 2 anything else
//! (no database at the path, a bad flag, an ambiguous id prefix, an
//! unreadable store); 3 `cancel` of a task that had already ended (nothing
//! changed).

use std::process::ExitCode;

use anyhow::Context;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_runtime::Runtime;
use mcp_tasks_store::{AttemptRecord, ListQuery, TaskStore};
use serde::Serialize;

use super::inspect::{EXIT_NOT_FOUND, InspectArgs, ListFlags, key_values, one_line, or_dash, print_json, table, when};
use super::instant_arg::parse_instant;
use super::task_id_arg::resolve_task;

/// Exit code of `tasks cancel` for a task that had already ended.
pub(super) const EXIT_ALREADY_ENDED: u8 = 3;

/// Flags of `mcp-tasks tasks`.
pub(crate) type Args = InspectArgs<Command>;

/// The subcommands of `mcp-tasks tasks`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// List tasks, newest first.
    List {
        /// Only tasks in this status (repeatable): working, input_required, completed, failed, cancelled.
        #[arg(long, value_name = "S")]
        status: Vec<TaskStatus>,
        /// Only tasks of this tool.
        #[arg(long, value_name = "T")]
        tool: Option<String>,
        /// Only tasks of this principal (as the server's token map names it).
        #[arg(long, value_name = "P")]
        principal: Option<String>,
        /// Only tasks created before this instant: RFC 3339 (2026-07-28T10:30:00Z),
        /// an age such as 2h or 30m (that long ago), today or yesterday (midnight UTC).
        #[arg(long, value_name = "WHEN", value_parser = parse_instant)]
        created_before: Option<Timestamp>,
        /// Only tasks created at or after this instant (the same forms as --created-before).
        #[arg(long, value_name = "WHEN", value_parser = parse_instant)]
        created_since: Option<Timestamp>,
        #[command(flatten)]
        flags: ListFlags,
    },
    /// Show one task in full, with every attempt it has made.
    Show {
        /// The task id, or an unambiguous prefix of it.
        id: String,
        /// Print the task record, with its attempts, as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a task, as its client's tasks/cancel would: a task nobody runs
    /// ends `cancelled` now; a running one has its cancel requested, and the
    /// server running it stops it (at once, or at its next lease renewal).
    Cancel {
        /// The task id, or an unambiguous prefix of it.
        id: String,
        /// Print the task record after the cancel as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `mcp-tasks tasks`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open().await?;
    let not_found = |id: &str| {
        eprintln!("error: task {id} not found in {}", args.db.location());
        Ok(ExitCode::from(EXIT_NOT_FOUND))
    };
    match args.command {
        Command::List { status, tool, principal, created_before, created_since, flags } => {
            let query = ListQuery {
                statuses: status,
                tool,
                principal,
                created_before,
                created_since,
                limit: flags.limit(),
                id_prefix: None,
            };
            let tasks = store.list(query).await?;
            let header = ["ID", "STATUS", "TOOL", "PRINCIPAL", "ATTEMPT", "CREATED", "UPDATED", "MESSAGE"];
            flags.print(&tasks, "no tasks", &header, list_row)?;
        }
        Command::Show { id, json } => {
            let Some(task_id) = resolve_task(store.as_ref(), &id).await?.one(&id, "task")? else { return not_found(&id) };
            let Some(task) = store.get(&task_id).await? else { return not_found(&id) };
            let attempts = store.attempts(&task_id).await?;
            if json {
                print_json(&WithAttempts { task: &task, attempts: &attempts })?;
            } else {
                print!("{}", details(&task));
                print!("{}", attempts_text(&attempts));
            }
        }
        Command::Cancel { id, json } => {
            let Some(task_id) = resolve_task(store.as_ref(), &id).await?.one(&id, "task")? else { return not_found(&id) };
            return cancel(store, &task_id, json).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Cancels `id` through the runtime's own `tasks/cancel` path (read, the
/// core's `decide_cancel`, a guarded write), as the task's owner would.
async fn cancel(store: std::sync::Arc<dyn TaskStore>, id: &TaskId, json: bool) -> anyhow::Result<ExitCode> {
    let Some(before) = store.get(id).await? else {
        eprintln!("error: task {id} not found");
        return Ok(ExitCode::from(EXIT_NOT_FOUND));
    };
    if before.status.is_terminal() {
        eprintln!("error: task {id} already ended {}; nothing to cancel", before.status);
        return Ok(ExitCode::from(EXIT_ALREADY_ENDED));
    }
    // A runtime with no tools runs nothing; it carries the cancel decision.
    let runtime = Runtime::builder(store).build().context("building the runtime")?;
    let after = runtime.cancel_task(id, before.principal.as_deref()).await?.record;
    if json {
        print_json(&after)?;
    } else if after.status == TaskStatus::Cancelled {
        println!("cancelled task {id}");
    } else if after.status.is_terminal() {
        // It ended on its own between the read and the write.
        eprintln!("error: task {id} already ended {}; nothing to cancel", after.status);
        return Ok(ExitCode::from(EXIT_ALREADY_ENDED));
    } else {
        let holder = after.lease.as_ref().map_or("its executor", |l| l.owner.as_str());
        println!("cancel requested for task {id}: {holder} holds it and will stop it");
    }
    Ok(ExitCode::SUCCESS)
}

/// `tasks show --json`: the record with its attempts.
#[derive(Serialize)]
struct WithAttempts<'a> {
    #[serde(flatten)]
    task: &'a TaskRecord,
    attempts: &'a [AttemptRecord],
}

fn list_row(t: &TaskRecord) -> Vec<String> {
    vec![
        t.id.to_string(),
        t.status.to_string(),
        t.tool.clone(),
        or_dash(t.principal.as_ref()),
        format!("{}/{}", t.attempt, t.max_attempts),
        when(t.created_at),
        when(t.updated_at),
        one_line(t.status_message.as_deref().unwrap_or(""), 60),
    ]
}

/// The attempts as a table under a heading (or a line saying there are none).
fn attempts_text(attempts: &[AttemptRecord]) -> String {
    if attempts.is_empty() {
        return "\nattempts: none ended yet\n".to_owned();
    }
    let header = ["ATTEMPT", "STARTED", "ENDED", "OUTCOME", "CLASS", "OWNER", "ERROR"];
    let rows = attempts
        .iter()
        .map(|a| {
            let error = a.error.as_ref().map(|e| e.message.clone()).or_else(|| a.message.clone());
            vec![
                a.attempt.to_string(),
                or_dash(a.started_at.map(when).as_ref()),
                when(a.ended_at),
                a.outcome.to_string(),
                or_dash(a.class.as_ref()),
                or_dash(a.owner.as_ref()),
                one_line(error.as_deref().unwrap_or("-"), 80),
            ]
        })
        .collect();
    format!("\nattempts:\n{}", table(&header, rows))
}

/// A multi-line description of one task.
fn details(t: &TaskRecord) -> String {
    let opt = |ts: Option<Timestamp>| or_dash(ts.map(when).as_ref());
    let mut rows: Vec<(&str, String)> = vec![
        ("id", t.id.to_string()),
        ("status", t.status.to_string()),
        ("tool", t.tool.clone()),
        ("principal", or_dash(t.principal.as_ref())),
        ("attempt", format!("{} of {}", t.attempt, t.max_attempts)),
        ("message", or_dash(t.status_message.as_ref())),
        ("created", when(t.created_at)),
        ("updated", when(t.updated_at)),
        ("deadline", when(t.deadline_at)),
        ("run at", opt(t.run_at)),
        ("lease", or_dash(t.lease.as_ref().map(|l| format!("{} until {}", l.owner, when(l.expires_at))).as_ref())),
        ("last polled", opt(t.last_polled_at)),
        ("cancel requested", if t.cancel_requested { "yes" } else { "no" }.to_owned()),
        ("terminal", opt(t.terminal_at)),
        ("expires", opt(t.expires_at)),
        ("idempotency key", or_dash(t.idempotency_key.as_ref())),
        ("arguments", t.arguments.to_string()),
    ];
    if let Some(result) = &t.result {
        rows.push(("result", result.to_string()));
    }
    if let Some(error) = &t.error {
        rows.push(("error", serde_json::to_string(error).unwrap_or_default()));
    }
    let pending: Vec<&str> = t.pending_input().map(|(k, _)| k.as_str()).collect();
    if !t.input_requests.is_empty() {
        rows.push(("input requests", t.input_requests.keys().cloned().collect::<Vec<_>>().join(", ")));
        rows.push(("input pending", if pending.is_empty() { "-".to_owned() } else { pending.join(", ") }));
    }
    key_values(&rows)
}
