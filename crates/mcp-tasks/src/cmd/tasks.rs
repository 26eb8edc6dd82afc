//! `mcp-tasks tasks`: inspect the tasks in a store.
//!
//! Exit codes: 0 done; 1 no such task (`show`); 2 anything else (no
//! database at the path, a bad flag, an unreadable store).

use std::process::ExitCode;

use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::ListQuery;

use super::inspect::{EXIT_NOT_FOUND, InspectArgs, ListFlags, key_values, one_line, or_dash, print_one, when};

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
        #[command(flatten)]
        flags: ListFlags,
    },
    /// Show one task in full.
    Show {
        /// The task id.
        id: String,
        /// Print the task record as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `mcp-tasks tasks`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open().await?;
    match args.command {
        Command::List { status, tool, flags } => {
            let tasks = store.list(ListQuery { statuses: status, tool, limit: flags.limit() }).await?;
            let header = ["ID", "STATUS", "TOOL", "ATTEMPT", "CREATED", "UPDATED", "MESSAGE"];
            flags.print(&tasks, "no tasks", &header, list_row)?;
        }
        Command::Show { id, json } => {
            let Some(task) = store.get(&TaskId(id.clone())).await? else {
                eprintln!("error: task {id} not found in {}", args.db.location());
                return Ok(ExitCode::from(EXIT_NOT_FOUND));
            };
            print_one(&task, json, details)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list_row(t: &TaskRecord) -> Vec<String> {
    vec![
        t.id.to_string(),
        t.status.to_string(),
        t.tool.clone(),
        format!("{}/{}", t.attempt, t.max_attempts),
        when(t.created_at),
        when(t.updated_at),
        one_line(t.status_message.as_deref().unwrap_or(""), 60),
    ]
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
