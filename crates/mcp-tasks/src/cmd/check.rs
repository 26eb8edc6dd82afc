//! `mcp-tasks check`: whether a configuration keeps the paper's cross-party
//! invariants (*Stateless Protocol, Stateful Problem*, §6.4), one line per
//! finding and what to change. `serve` runs the same check at start
//! ([`checked_policy`]) and refuses to start on an error.
//!
//! Exit status: 0 when there is no error (warnings allowed), 1 on an error,
//! 2 when a flag or the configuration file cannot be used.

use std::process::ExitCode;
use std::time::Duration;

use mcp_tasks_core::{ClientExpectations, Finding, Policy, Severity, check_config};

use super::config_file::parse_duration;
use super::policy_args::PolicyArgs;

/// Flags of `mcp-tasks check`: `serve`'s policy flags, what clients do, and
/// the output format.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    clients: ClientArgs,
    /// Print the findings as one JSON object instead of lines.
    #[arg(long)]
    json: bool,
}

/// What the server may assume of its clients (also a flag of `serve`).
#[derive(Debug, clap::Args)]
pub(crate) struct ClientArgs {
    /// The longest a client leaves between two polls of a task it follows,
    /// e.g. 300s or 5m (default: clients pace themselves by the advertised
    /// orphan window, as mcp-tasks' own client does).
    #[arg(long, env = "MCP_TASKS_CLIENT_MAX_POLL_GAP", value_name = "DURATION", value_parser = parse_duration)]
    client_max_poll_gap: Option<Duration>,
}

impl ClientArgs {
    fn expectations(&self) -> ClientExpectations {
        ClientExpectations { max_poll_gap: self.client_max_poll_gap }
    }
}

/// Runs `mcp-tasks check`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let policy = args.policy.unchecked_policy()?;
    let findings = check_config(&policy, &args.clients.expectations());
    let (errors, warnings) = counts(&findings);
    if args.json {
        let report = serde_json::json!({"ok": errors == 0, "errors": errors, "warnings": warnings, "findings": findings});
        println!("{report}");
    } else {
        for finding in &findings {
            println!("{}", line(finding));
        }
        println!("{}", summary(errors, warnings));
    }
    Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The policy `serve` runs with: built from its flags and checked as
/// `mcp-tasks check` would check it. Warnings are logged; errors are
/// printed to stderr, one line each as `check` prints them, and refuse.
pub(crate) fn checked_policy(policy: &PolicyArgs, clients: &ClientArgs) -> anyhow::Result<Policy> {
    let policy = policy.unchecked_policy()?;
    let findings = check_config(&policy, &clients.expectations());
    let (errors, _) = counts(&findings);
    for finding in &findings {
        match finding.severity {
            Severity::Warning => tracing::warn!("configuration: {}", finding.message),
            Severity::Error => eprintln!("{}", line(finding)),
        }
    }
    if errors > 0 {
        anyhow::bail!(
            "refusing to start: the configuration has {} (`mcp-tasks check` with the same flags lists them)",
            plural(errors, "error")
        );
    }
    Ok(policy)
}

fn counts(findings: &[Finding]) -> (usize, usize) {
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    (errors, findings.len() - errors)
}

fn line(finding: &Finding) -> String {
    format!("{}: {}", finding.severity.as_str(), finding.message)
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn summary(errors: usize, warnings: usize) -> String {
    let verdict = if errors > 0 { "serve would refuse this configuration" } else { "serve would start" };
    format!("check: {}, {}: {verdict}", plural(errors, "error"), plural(warnings, "warning"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_and_says_what_serve_would_do() {
        assert_eq!(summary(0, 0), "check: 0 errors, 0 warnings: serve would start");
        assert_eq!(summary(1, 2), "check: 1 error, 2 warnings: serve would refuse this configuration");
    }
}
