//! `mcp-tasks dlq`: inspect and act on the dead-letter queue.
//!
//! `requeue` and `purge` act on one letter (by task id, or an unambiguous
//! prefix of one) or in bulk on every letter a filter matches (tool, age,
//! failure class, text of the error). A bulk action first lists what it
//! matched and then acts on exactly those letters, by id, so a letter
//! written meanwhile is never touched; `--dry-run` prints that list and
//! changes nothing.
//!
//! Exit codes: 0 done; 1 no such dead letter (`show`, `requeue ID`, `purge
//! ID`); 2 anything else (no database at the path, a bad flag, an ambiguous
//! id prefix, a letter already requeued, an unreadable store).

use std::process::ExitCode;

use anyhow::{Context, bail};
use mcp_tasks_core::{FailureClass, Policy, TaskId, Timestamp};
use mcp_tasks_runtime::{Runtime, RuntimeError};
use mcp_tasks_store::{DeadLetter, DeadLetterQuery, PurgeQuery, StoreError};

use super::inspect::{
    EXIT_NOT_FOUND, InspectArgs, ListFlags, key_values, one_line, or_dash, print_json, print_one, table, when,
};
use super::instant_arg::parse_instant;
use super::policy_args::PolicyArgs;
use super::task_id_arg::resolve_dead_letter;

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
        /// The dead-lettered task's id, or an unambiguous prefix of it.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run dead-lettered calls again as fresh tasks (new ids, a fresh
    /// attempt budget and deadline from the policy flags, as `serve` reads
    /// them): one by id, or every letter not yet requeued that the filters
    /// match (--all for every one).
    #[command(group(clap::ArgGroup::new("which").required(true).multiple(true)
        .args(["id", "all", "tool", "before", "since", "class", "error_contains"])))]
    Requeue {
        /// The dead-lettered task's id, or an unambiguous prefix of it.
        #[arg(conflicts_with_all = ["all", "tool", "before", "since", "class", "error_contains", "dry_run"])]
        id: Option<String>,
        #[command(flatten)]
        filter: LetterFilter,
        /// Print what would be requeued and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON (the new task records; with --dry-run, the matched letters).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Delete dead letters: the given ones, or every letter (requeued or
    /// not) that the filters match (--all for every one).
    #[command(group(clap::ArgGroup::new("which").required(true).multiple(true)
        .args(["ids", "all", "tool", "before", "since", "class", "error_contains"])))]
    Purge {
        /// These dead-lettered tasks (ids or unambiguous prefixes).
        #[arg(value_name = "ID", conflicts_with_all = ["all", "tool", "before", "since", "class", "error_contains"])]
        ids: Vec<String>,
        #[command(flatten)]
        filter: LetterFilter,
        /// Print what would be purged and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// The filters of a bulk `requeue` or `purge`; a letter must match every one given.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct LetterFilter {
    /// Every dead letter (the other filters still narrow it).
    #[arg(long)]
    all: bool,
    /// Only letters of this tool.
    #[arg(long, value_name = "T")]
    tool: Option<String>,
    /// Only those dead before this instant: RFC 3339 (2026-07-28T10:30:00Z),
    /// an age such as 2h or 30m (that long ago), today or yesterday (midnight UTC).
    #[arg(long, value_name = "WHEN", value_parser = parse_instant)]
    before: Option<Timestamp>,
    /// Only those dead at or after this instant (the same forms as --before).
    #[arg(long, value_name = "WHEN", value_parser = parse_instant)]
    since: Option<Timestamp>,
    /// Only those whose final error has this failure class: transient, permanent or poison.
    #[arg(long, value_name = "CLASS", value_parser = parse_class)]
    class: Option<FailureClass>,
    /// Only those whose final error message contains this text.
    #[arg(long, value_name = "TEXT")]
    error_contains: Option<String>,
}

impl LetterFilter {
    /// The store's part of the filter.
    fn query(&self, include_requeued: bool) -> DeadLetterQuery {
        DeadLetterQuery {
            tool: self.tool.clone(),
            dead_before: self.before,
            dead_since: self.since,
            include_requeued,
            ..DeadLetterQuery::default()
        }
    }

    /// What the store cannot filter on: the class and text of the error.
    fn matches(&self, letter: &DeadLetter) -> bool {
        let class = letter.error.data.as_ref().and_then(|d| d.get("class")).and_then(|c| c.as_str());
        self.class.is_none_or(|want| class == Some(want.to_string().as_str()))
            && self.error_contains.as_deref().is_none_or(|text| letter.error.message.contains(text))
    }
}

/// A `--class` value.
fn parse_class(text: &str) -> Result<FailureClass, String> {
    serde_json::from_value(serde_json::Value::String(text.trim().to_ascii_lowercase()))
        .map_err(|_| "expected transient, permanent or poison".to_owned())
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
    let runtime = Runtime::builder(store.clone()).policy(policy).build().context("building the runtime")?;
    let dlq = runtime.dead_letters();
    let not_found = |id: &str| {
        eprintln!("error: no dead letter for task {id} in {}", args.db.location());
        Ok(ExitCode::from(EXIT_NOT_FOUND))
    };
    match args.command {
        Command::List { tool, all, flags } => {
            let query = DeadLetterQuery { tool, include_requeued: all, limit: flags.limit(), ..DeadLetterQuery::default() };
            let letters = dlq.list(query).await?;
            let header = ["TASK", "TOOL", "ATTEMPTS", "DEAD AT", "REQUEUED AS", "REASON"];
            flags.print(&letters, "no dead letters", &header, list_row)?;
        }
        Command::Show { id, json } => {
            let Some(task) = resolve_dead_letter(store.as_ref(), &id).await?.one(&id, "dead letter")? else {
                return not_found(&id);
            };
            match dlq.show(&task).await {
                Ok(letter) => print_one(&letter, json, details)?,
                Err(RuntimeError::Store(StoreError::DeadLetterNotFound(_))) => return not_found(&id),
                Err(e) => return Err(e.into()),
            }
        }
        Command::Requeue { id: Some(id), json, .. } => {
            let Some(task) = resolve_dead_letter(store.as_ref(), &id).await?.one(&id, "dead letter")? else {
                return not_found(&id);
            };
            match dlq.requeue(&task).await {
                Ok(view) if json => print_json(&view.record)?,
                Ok(view) => println!("requeued {task} as task {}", view.record.id),
                Err(RuntimeError::Store(StoreError::DeadLetterNotFound(_))) => return not_found(&id),
                Err(e) => return Err(e.into()),
            }
        }
        Command::Requeue { id: None, filter, dry_run, json, .. } => {
            let matched = matching(&dlq, &filter, false).await?;
            if dry_run {
                return report_dry_run(&matched, "requeue", json);
            }
            let mut requeued = Vec::new();
            for letter in &matched {
                let view = dlq.requeue(&letter.task_id).await?;
                if !json {
                    println!("requeued {} as task {}", letter.task_id, view.record.id);
                }
                requeued.push(view.record);
            }
            if json {
                print_json(&requeued)?;
            } else {
                println!("requeued {}", plural(requeued.len()));
            }
        }
        Command::Purge { ids, filter, dry_run } => {
            let matched = if ids.is_empty() {
                matching(&dlq, &filter, true).await?
            } else {
                let mut letters = Vec::new();
                for id in &ids {
                    let Some(task) = resolve_dead_letter(store.as_ref(), id).await?.one(id, "dead letter")? else {
                        return not_found(id);
                    };
                    letters.push(dlq.show(&task).await?);
                }
                letters
            };
            if dry_run {
                return report_dry_run(&matched, "purge", false);
            }
            let task_ids = Some(matched.iter().map(|l| l.task_id.clone()).collect::<Vec<TaskId>>());
            let n = if matched.is_empty() { 0 } else { dlq.purge(PurgeQuery { task_ids, ..PurgeQuery::default() }).await? };
            println!("purged {}", plural(usize::try_from(n).unwrap_or(usize::MAX)));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every letter `filter` matches (requeued ones too when `include_requeued`).
async fn matching(
    dlq: &mcp_tasks_runtime::DeadLetters<'_>,
    filter: &LetterFilter,
    include_requeued: bool,
) -> anyhow::Result<Vec<DeadLetter>> {
    if !filter.all
        && filter.tool.is_none()
        && filter.before.is_none()
        && filter.since.is_none()
        && filter.class.is_none()
        && filter.error_contains.is_none()
    {
        bail!("give a dead letter's id, a filter (--tool, --before, --since, --class, --error-contains) or --all");
    }
    let letters = dlq.list(filter.query(include_requeued)).await?;
    Ok(letters.into_iter().filter(|l| filter.matches(l)).collect())
}

/// Prints what a bulk action would do to `matched`, changing nothing.
fn report_dry_run(matched: &[DeadLetter], action: &str, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        print_json(matched)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("dry run: would {action} {}", plural(matched.len()));
    if !matched.is_empty() {
        let header = ["TASK", "TOOL", "ATTEMPTS", "DEAD AT", "REQUEUED AS", "REASON"];
        print!("{}", table(&header, matched.iter().map(list_row).collect()));
    }
    Ok(ExitCode::SUCCESS)
}

fn plural(n: usize) -> String {
    format!("{n} dead letter{}", if n == 1 { "" } else { "s" })
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
