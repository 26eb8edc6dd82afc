//! `mcp-tasks reap`: one reaper pass now (timeouts → orphans → expiry), or
//! with `--dry-run` what that pass would do, changing nothing.
//!
//! Both read the same candidates and ask the core's reaper (`decide`) about
//! each, under the policy flags `serve` takes (so give it the server's
//! windows). Silence is judged from the stored poll timestamps alone: a
//! server writes its polls in batches every few seconds, far inside half an
//! orphan window, so a task its clients poll as they should never looks
//! abandoned to a pass run from here.
//!
//! Exit codes: 0 done; 2 anything else (no database at the path, a bad flag,
//! an invalid policy, an unreadable store).

use std::process::ExitCode;

use anyhow::Context;
use mcp_tasks_core::reaper::ReaperAction;
use mcp_tasks_core::{Sweep, Timestamp};
use mcp_tasks_runtime::{PlannedReap, Runtime};
use serde::Serialize;

use super::inspect::{DbArg, one_line, print_json, table};
use super::policy_args::PolicyArgs;

/// Flags of `mcp-tasks reap`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    db: DbArg,
    /// Print what the pass would do, for each task it would act on, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// One planned action, as printed.
#[derive(Debug, Serialize)]
struct PlanLine {
    sweep: &'static str,
    task: String,
    status: String,
    tool: String,
    decision: &'static str,
    detail: String,
}

/// What a pass did, as printed with `--json`.
#[derive(Debug, Serialize)]
struct Done {
    timed_out: usize,
    orphaned: usize,
    expired: usize,
}

/// Runs `mcp-tasks reap`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let policy = args.policy.policy()?;
    let store = args.db.open().await?;
    let runtime = Runtime::builder(store)
        .policy(policy)
        .silence_floor(Timestamp::from_millis(0))
        .build()
        .context("building the runtime")?;
    if args.dry_run {
        let plan: Vec<PlanLine> = runtime.reap_plan().await?.iter().map(plan_line).collect();
        if args.json {
            print_json(&plan)?;
        } else if plan.is_empty() {
            println!("dry run: the next sweep would change nothing");
        } else {
            println!("dry run: the next sweep would act on {} task{}", plan.len(), if plan.len() == 1 { "" } else { "s" });
            let header = ["SWEEP", "TASK", "STATUS", "TOOL", "DECISION", "DETAIL"];
            let rows = plan
                .iter()
                .map(|p| {
                    vec![
                        p.sweep.to_owned(),
                        p.task.clone(),
                        p.status.clone(),
                        p.tool.clone(),
                        p.decision.to_owned(),
                        one_line(&p.detail, 80),
                    ]
                })
                .collect();
            print!("{}", table(&header, rows));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = runtime.reap_once().await?;
    if args.json {
        print_json(&Done { timed_out: report.timed_out, orphaned: report.orphaned, expired: report.expired })?;
    } else {
        println!("reaped: {} timed out, {} orphaned, {} expired", report.timed_out, report.orphaned, report.expired);
    }
    Ok(ExitCode::SUCCESS)
}

fn plan_line(p: &PlannedReap) -> PlanLine {
    let sweep = match p.sweep {
        Sweep::Timeouts => "timeout",
        Sweep::Orphans => "orphan",
        Sweep::Expiry => "expiry",
    };
    let (decision, detail) = match &p.action {
        ReaperAction::FailTimeout(error) => ("fail", error.message.clone()),
        ReaperAction::CancelOrphan(message) => ("cancel", message.clone()),
        ReaperAction::FinishCancel => ("cancel", "its cancel was requested; ends cancelled".to_owned()),
        ReaperAction::Delete => ("delete", "retention over".to_owned()),
    };
    PlanLine {
        sweep,
        task: p.task.id.to_string(),
        status: p.task.status.to_string(),
        tool: p.task.tool.clone(),
        decision,
        detail,
    }
}
