//! `mcp-tasks check`: whether a server's policy, and the clients it expects,
//! keep the paper's cross-party invariants (*Stateless Protocol, Stateful
//! Problem*, §6.4), as a list of findings that each say what to change.
//!
//! Errors are configurations that lose work a correct client still wants
//! (every rule of [`Policy::problems`], and a client gap the orphan window
//! cannot hold); warnings are margins too thin to survive one late poll or a
//! crash. The margins, and why:
//!
//! - **Client poll gap** `g` against the orphan window `W`: polls are
//!   recorded up to one `poll_flush_interval` `F` late, so `g + F ≥ W` gets a
//!   polling client's task cancelled (error; the paper's E4: 300 s against
//!   120 s). Above `W / 2` ([`ORPHAN_WINDOW_SHARE`]) one lost or late poll
//!   does it (warning): the share this project's own client keeps.
//! - **Retention**, which is what a live task's `ttlMs` promises (the
//!   shortest of the per-outcome windows): a client that waits `g` between
//!   polls must find a result that ended just after its last poll, so it
//!   must be at least `g` (error). Warnings when it is shorter than the
//!   largest poll hint (a client following the hint may miss the result) or
//!   than the orphan window (a client silent for less than the server
//!   tolerates for a live task loses a finished one).
//! - **Reaper interval**: at most a [`SWEEPS_PER_WINDOW`](crate::policy::SWEEPS_PER_WINDOW)th of the windows
//!   it enforces (an error, from [`Policy::problems`]).
//! - **Leases and retries** against `max_execution`: a task whose executor
//!   died is taken over only after its lease lapses and a sweep notices; if
//!   that is as long as the deadline, a crash always ends in a timeout, and
//!   backoff longer than the deadline leaves the last attempts unrun
//!   (warnings).

use std::time::Duration;

use serde::Serialize;

use crate::policy::Policy;
use crate::poll::ORPHAN_WINDOW_SHARE;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The configuration loses work a correct client wants: refuse it.
    Error,
    /// A margin too thin to survive one late poll or a crash.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem with a configuration: how bad, and a message naming the
/// settings, their values and what to change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong and what to change.
    pub message: String,
}

impl Finding {
    fn error(message: String) -> Self {
        Finding { severity: Severity::Error, message }
    }

    fn warning(message: String) -> Self {
        Finding { severity: Severity::Warning, message }
    }
}

/// What the server may assume of its clients.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientExpectations {
    /// The longest a client leaves between two polls of a task it follows;
    /// `None`: clients pace themselves by the advertised orphan window, as
    /// this project's client does (at most half of it).
    pub max_poll_gap: Option<Duration>,
}

/// Every finding for `policy` served to clients that behave as `clients`
/// says: errors first, then warnings. Empty when nothing is wrong.
///
/// ```
/// use std::time::Duration;
/// use mcp_tasks_core::{ClientExpectations, Policy, Severity, check_config};
///
/// assert!(check_config(&Policy::default(), &ClientExpectations::default()).is_empty());
/// // The paper's E4: clients that wait up to 300 s, an orphan window of 120 s.
/// let mut policy = Policy::default();
/// policy.retention.orphan_after = Duration::from_secs(120);
/// let findings = check_config(&policy, &ClientExpectations { max_poll_gap: Some(Duration::from_secs(300)) });
/// assert_eq!(findings[0].severity, Severity::Error);
/// assert!(findings[0].message.contains("300s") && findings[0].message.contains("120s"));
/// ```
pub fn check_config(policy: &Policy, clients: &ClientExpectations) -> Vec<Finding> {
    let mut findings: Vec<Finding> = policy.problems().into_iter().map(Finding::error).collect();
    if let Some(gap) = clients.max_poll_gap {
        findings.extend(client_gap(policy, gap));
    }
    findings.extend(retention(policy, clients.max_poll_gap));
    findings.extend(takeover(policy));
    findings.extend(backoff(policy));
    findings.sort_by_key(|f| f.severity != Severity::Error);
    findings
}

/// Whether any finding is an error.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

/// A client's poll gap against the orphan window.
fn client_gap(policy: &Policy, gap: Duration) -> Option<Finding> {
    let window = policy.retention.orphan_after;
    let flush = policy.poll_flush_interval;
    let safe_gap = window.mul_f64(ORPHAN_WINDOW_SHARE);
    // Saturating: a gap near Duration::MAX must not overflow the advice.
    let wide_enough = Duration::try_from_secs_f64(gap.as_secs_f64() / ORPHAN_WINDOW_SHARE).unwrap_or(Duration::MAX);
    if gap.saturating_add(flush) >= window {
        Some(Finding::error(format!(
            "clients wait up to {gap:?} between polls (--client-max-poll-gap) but the orphan window \
             (retention.orphan_after, --orphan-window) is {window:?}: a task whose client still follows it is \
             cancelled as an orphan (polls are recorded up to poll_flush_interval, {flush:?}, late); widen the \
             orphan window to at least {wide_enough:?} or make clients poll at least every {safe_gap:?}"
        )))
    } else if gap > safe_gap {
        Some(Finding::warning(format!(
            "clients wait up to {gap:?} between polls (--client-max-poll-gap), more than half the orphan window \
             ({window:?}): one lost or late poll gets a followed task cancelled; widen the orphan window to at \
             least {wide_enough:?} or make clients poll at least every {safe_gap:?}"
        )))
    } else {
        None
    }
}

/// How long finished tasks are kept (what a live task's `ttlMs` promises)
/// against how long a client may take to come back for them.
fn retention(policy: &Policy, gap: Option<Duration>) -> Vec<Finding> {
    let kept = policy.retention.shortest();
    let mut findings = Vec::new();
    if let Some(gap) = gap
        && kept < gap
    {
        findings.push(Finding::error(format!(
            "finished tasks are kept {kept:?} (the shortest retention, and the ttlMs a live task promises) but \
             clients wait up to {gap:?} between polls: a result that arrives just after a poll is deleted before \
             the next; raise the retention (--retention) to at least {gap:?}"
        )));
    }
    let largest_hint = policy.poll_hint.max.max(policy.poll_hint.unknown);
    if kept < largest_hint {
        findings.push(Finding::warning(format!(
            "finished tasks are kept {kept:?} (the shortest retention, and the ttlMs a live task promises) but the \
             server may tell clients to wait {largest_hint:?} between polls (poll_hint.max/unknown): a client \
             following the hint may find its result deleted; raise the retention to at least {largest_hint:?} or \
             lower the hint"
        )));
    }
    let window = policy.retention.orphan_after;
    if kept < window {
        findings.push(Finding::warning(format!(
            "finished tasks are kept {kept:?} (the shortest retention) but a live task is kept {window:?} without a \
             poll (the orphan window): a client away for less than the server tolerates loses a finished result; \
             raise the retention (--retention) to at least {window:?}"
        )));
    }
    findings
}

/// A dead executor's task is taken over after its lease lapses and a sweep
/// notices: that must come well before the task's deadline.
fn takeover(policy: &Policy) -> Option<Finding> {
    let lease = policy.lease_duration;
    let reaper = policy.reaper_interval;
    let deadline = policy.retention.max_execution;
    let takeover = lease.saturating_add(reaper);
    (takeover >= deadline).then(|| {
        Finding::warning(format!(
            "a task whose executor dies is taken over only after its lease_duration ({lease:?}) and a reaper sweep \
             ({reaper:?}), which is not before its deadline (retention.max_execution, --max-execution, \
             {deadline:?}): every crash ends in a timeout, never a retry; shorten lease_duration or lengthen \
             max_execution to more than {takeover:?}"
        ))
    })
}

/// The retries' backoff against the task's deadline.
fn backoff(policy: &Policy) -> Option<Finding> {
    let retry = &policy.retry;
    let deadline = policy.retention.max_execution;
    // Bounded: after this many retries the cap has long reached max_delay
    // (or the sum has passed any deadline worth checking).
    let retries = retry.max_attempts.saturating_sub(1).min(10_000);
    let mut total = Duration::ZERO;
    for attempt in 1..=retries {
        total = total.saturating_add(retry.delay_cap(attempt));
        if total >= deadline {
            break;
        }
    }
    (retries > 0 && total >= deadline).then(|| {
        Finding::warning(format!(
            "the retries' backoff may add up to {total:?} ({} attempts, retry.base_delay {:?}, retry.max_delay \
             {:?}), not less than the deadline (retention.max_execution, --max-execution, {deadline:?}): the last \
             attempts may never run; lower --max-attempts or --retry-max, or lengthen --max-execution",
            retry.max_attempts, retry.base_delay, retry.max_delay
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn gap(n: u64) -> ClientExpectations {
        ClientExpectations { max_poll_gap: Some(secs(n)) }
    }

    fn only(findings: &[Finding], severity: Severity) -> Vec<&str> {
        findings.iter().filter(|f| f.severity == severity).map(|f| f.message.as_str()).collect()
    }

    #[test]
    fn the_defaults_pass_without_warnings() {
        assert_eq!(check_config(&Policy::default(), &ClientExpectations::default()), vec![]);
        // A client that keeps to half the default window (900 s) is fine too.
        assert_eq!(check_config(&Policy::default(), &gap(450)), vec![]);
    }

    #[test]
    fn the_papers_e4_client_gap_is_an_error_naming_both_numbers() {
        let mut p = Policy::default();
        p.retention.orphan_after = secs(120);
        let findings = check_config(&p, &gap(300));
        let errors = only(&findings, Severity::Error);
        assert_eq!(errors.len(), 1, "{findings:?}");
        assert!(errors[0].contains("300s") && errors[0].contains("120s"), "{}", errors[0]);
        assert!(errors[0].contains("600s") && errors[0].contains("60s"), "says what to change: {}", errors[0]);
    }

    #[test]
    fn a_gap_between_half_and_the_whole_window_is_a_warning() {
        let mut p = Policy::default();
        p.retention.orphan_after = secs(120);
        let findings = check_config(&p, &gap(80));
        assert_eq!(only(&findings, Severity::Error), Vec::<&str>::new());
        let warnings = only(&findings, Severity::Warning);
        assert!(warnings.iter().any(|w| w.contains("80s") && w.contains("120s")), "{findings:?}");
        assert_eq!(check_config(&p, &gap(60)).len(), 0, "half the window is the margin");
    }

    #[test]
    fn a_gap_the_late_flush_pushes_past_the_window_is_an_error() {
        let mut p = Policy::default();
        p.retention.orphan_after = secs(120);
        p.poll_flush_interval = secs(10);
        assert!(has_errors(&check_config(&p, &gap(110))));
        assert!(!has_errors(&check_config(&p, &gap(109))));
    }

    #[test]
    fn a_hint_ceiling_beyond_half_the_window_is_an_error_naming_both() {
        let mut p = Policy::default();
        p.retention.orphan_after = secs(120);
        p.poll_hint.max = secs(300);
        let findings = check_config(&p, &ClientExpectations::default());
        let errors = only(&findings, Severity::Error);
        assert!(errors.iter().any(|e| e.contains("300s") && e.contains("120s") && e.contains("poll_hint.max")));
    }

    #[test]
    fn every_policy_rule_is_an_error_not_only_the_first() {
        let mut p = Policy::default();
        p.retry.max_attempts = 0;
        p.reaper_interval = secs(600);
        p.poll_flush_interval = secs(800);
        let findings = check_config(&p, &ClientExpectations::default());
        let errors = only(&findings, Severity::Error);
        for setting in ["max_attempts", "reaper_interval", "poll_flush_interval"] {
            assert!(errors.iter().any(|e| e.contains(setting)), "{setting}: {findings:?}");
        }
        assert!(errors.iter().any(|e| e.contains("225s")), "the largest reaper interval is named: {errors:?}");
    }

    #[test]
    fn retention_shorter_than_a_clients_gap_is_an_error() {
        let mut p = Policy::default();
        p.retention.completed = secs(100);
        let findings = check_config(&p, &gap(200));
        let errors = only(&findings, Severity::Error);
        assert_eq!(errors.len(), 1, "{findings:?}");
        assert!(errors[0].contains("100s") && errors[0].contains("200s") && errors[0].contains("ttlMs"));
    }

    #[test]
    fn retention_shorter_than_the_hint_or_the_orphan_window_is_a_warning() {
        let mut p = Policy::default();
        p.retention.failed = secs(30);
        let warnings: Vec<String> = check_config(&p, &ClientExpectations::default())
            .into_iter()
            .inspect(|f| assert_eq!(f.severity, Severity::Warning))
            .map(|f| f.message)
            .collect();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("30s") && warnings[0].contains("60s"), "{}", warnings[0]);
        assert!(warnings[1].contains("30s") && warnings[1].contains("900s"), "{}", warnings[1]);
    }

    #[test]
    fn a_lease_as_long_as_the_deadline_is_a_warning() {
        let mut p = Policy::default();
        p.retention.max_execution = secs(200);
        p.lease_duration = secs(190);
        p.reaper_interval = secs(20);
        let findings = check_config(&p, &ClientExpectations::default());
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].severity, Severity::Warning);
        assert!(findings[0].message.contains("190s") && findings[0].message.contains("200s"));
    }

    #[test]
    fn backoff_beyond_the_deadline_is_a_warning() {
        let mut p = Policy::default();
        p.retry.max_attempts = 100; // 99 retries of up to 30 s: ~49 min > 30 min
        let findings = check_config(&p, &ClientExpectations::default());
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.contains("100 attempts") && findings[0].message.contains("1800s"));
        p.retry.max_attempts = 10;
        assert!(check_config(&p, &ClientExpectations::default()).is_empty());
        p.retry.max_attempts = u32::MAX;
        assert_eq!(check_config(&p, &ClientExpectations::default()).len(), 1, "bounded, and still found");
    }

    #[test]
    fn extreme_durations_do_not_overflow() {
        let mut p = Policy::default();
        p.retention.orphan_after = Duration::MAX;
        p.poll_flush_interval = Duration::MAX;
        p.lease_duration = Duration::MAX;
        let findings = check_config(&p, &ClientExpectations { max_poll_gap: Some(Duration::MAX) });
        assert!(has_errors(&findings));
    }
}
