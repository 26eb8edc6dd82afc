//! `mcp-tasks tasks`: inspect the tasks in a store.
//!
//! Exit codes: 0 done; 1 no such task (`show`); 2 anything else (no
//! database at the path, a bad flag, an unreadable store).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_sqlite::SqliteStore;
use mcp_tasks_store::{ListQuery, TaskStore};

/// Exit code for "no such task".
pub(super) const EXIT_NOT_FOUND: u8 = 1;

/// Flags of `mcp-tasks tasks`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The task database (SQLite) to read.
    #[arg(long, value_name = "PATH", env = "MCP_TASKS_DB", default_value = "./mcp-tasks.db", global = true)]
    db: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// List tasks, newest first.
    List {
        /// Only tasks in this status (repeatable): working, input_required, completed, failed, cancelled.
        #[arg(long, value_name = "S")]
        status: Vec<TaskStatus>,
        /// Only tasks of this tool.
        #[arg(long, value_name = "T")]
        tool: Option<String>,
        /// At most this many tasks.
        #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
        limit: u64,
        /// Print JSON (an array of task records) instead of a table.
        #[arg(long)]
        json: bool,
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

/// Opens an existing task database; a missing file is an error rather than
/// a new, empty database (a mistyped path must not look like "no tasks").
pub(super) fn open_store(db: &Path) -> anyhow::Result<Arc<dyn TaskStore>> {
    if !db.exists() {
        bail!("no task database at {} (pass --db PATH or set MCP_TASKS_DB)", db.display());
    }
    let store = SqliteStore::open(db).with_context(|| format!("opening {}", db.display()))?;
    Ok(Arc::new(store))
}

/// Runs `mcp-tasks tasks`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = open_store(&args.db)?;
    match args.command {
        Command::List { status, tool, limit, json } => {
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            let tasks = store.list(ListQuery { statuses: status, tool, limit }).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tasks)?);
            } else if tasks.is_empty() {
                println!("no tasks");
            } else {
                let header = ["ID", "STATUS", "TOOL", "ATTEMPT", "CREATED", "UPDATED", "MESSAGE"];
                let rows = tasks.iter().map(list_row).collect();
                print!("{}", table(&header, rows));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Show { id, json } => {
            let Some(task) = store.get(&TaskId(id.clone())).await? else {
                eprintln!("error: task {id} not found in {}", args.db.display());
                return Ok(ExitCode::from(EXIT_NOT_FOUND));
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&task)?);
            } else {
                print!("{}", details(&task));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
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
    let opt = |ts: Option<Timestamp>| ts.map_or_else(|| "-".to_owned(), when);
    let mut rows: Vec<(&str, String)> = vec![
        ("id", t.id.to_string()),
        ("status", t.status.to_string()),
        ("tool", t.tool.clone()),
        ("principal", t.principal.clone().unwrap_or_else(|| "-".to_owned())),
        ("attempt", format!("{} of {}", t.attempt, t.max_attempts)),
        ("message", t.status_message.clone().unwrap_or_else(|| "-".to_owned())),
        ("created", when(t.created_at)),
        ("updated", when(t.updated_at)),
        ("deadline", when(t.deadline_at)),
        ("run at", opt(t.run_at)),
        (
            "lease",
            t.lease.as_ref().map_or_else(|| "-".to_owned(), |l| format!("{} until {}", l.owner, when(l.expires_at))),
        ),
        ("last polled", opt(t.last_polled_at)),
        ("cancel requested", if t.cancel_requested { "yes" } else { "no" }.to_owned()),
        ("terminal", opt(t.terminal_at)),
        ("expires", opt(t.expires_at)),
        ("idempotency key", t.idempotency_key.clone().unwrap_or_else(|| "-".to_owned())),
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

/// `key: value` lines with the values aligned.
pub(super) fn key_values(rows: &[(&str, String)]) -> String {
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter().map(|(k, v)| format!("{:width$}  {v}\n", format!("{k}:"), width = width + 1)).collect()
}

/// An instant as RFC 3339 text (UTC, milliseconds when there are any).
pub(super) fn when(at: Timestamp) -> String {
    mcp_tasks_server::wire::iso8601(at)
}

/// Parses RFC 3339 text (`2026-07-28T10:30:00Z`) into an instant.
pub(super) fn parse_when(text: &str) -> anyhow::Result<Timestamp> {
    use time::format_description::well_known::Rfc3339;
    let t = time::OffsetDateTime::parse(text, &Rfc3339)
        .with_context(|| format!("{text:?} is not an RFC 3339 instant (like 2026-07-28T10:30:00Z)"))?;
    let ms = t.unix_timestamp_nanos() / 1_000_000;
    Ok(Timestamp::from_millis(i64::try_from(ms).context("instant out of range")?))
}

/// `s` on one line, cut to `max` characters.
pub(super) fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A plain table: columns padded to their widest cell, two spaces apart.
pub(super) fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(w - cell.chars().count() + 2));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    for row in rows {
        out.push_str(&line(row));
    }
    out
}
