//! E3 — what the default classification costs (paper §6.3, Table 4).
//!
//! 100 failures go through the project's real [`Classifier`] and
//! [`RetryPolicy`]: the classifier names the class after each attempt (with
//! the attempt ceiling), the retry policy decides. A truly transient failure
//! succeeds on the attempt after its first retry; anything else fails again
//! with the same text. No randomness reaches the totals.

use mcp_tasks_core::retry::RetryDecision;
use mcp_tasks_core::{Classifier, ClassifierConfig, Failure, FailureClass, PyRandom, RetryPolicy};
use serde::Serialize;

use crate::error::StudyError;
use crate::progress::Progress;
use crate::table::{Table, percent};

/// A failure the classifier recognises as transient.
pub const TRANSIENT_TEXT: &str = "upstream timeout after 30s";
/// A failure the classifier recognises as permanent.
pub const PERMANENT_TEXT: &str = "invalid arguments: 'limit' must be an integer";
/// A failure no marker recognises: the default class decides.
pub const UNKNOWN_TEXT: &str = "widget subsystem returned E_BADSTATE";
/// Recognised-transient failures in the workload.
pub const TRANSIENT_COUNT: usize = 20;
/// Recognised-permanent failures in the workload.
pub const PERMANENT_COUNT: usize = 20;
/// Unrecognised failures in the workload.
pub const UNKNOWN_COUNT: usize = 60;

/// E3's parameters; the default is the paper's sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct E3Params {
    /// Fractions of the unrecognised failures that are truly transient.
    pub fractions: Vec<f64>,
    /// The attempt ceiling (total attempts).
    pub max_attempts: u32,
}

impl Default for E3Params {
    fn default() -> Self {
        E3Params { fractions: vec![0.0, 0.25, 0.5, 0.75, 1.0], max_attempts: 3 }
    }
}

impl E3Params {
    /// Refuses parameters the model is not defined on, naming the flag.
    pub fn validate(&self) -> Result<(), StudyError> {
        if self.fractions.is_empty() {
            return Err(StudyError::param("fractions", "give at least one value"));
        }
        if let Some(bad) = self.fractions.iter().find(|f| !(0.0..=1.0).contains(*f)) {
            return Err(StudyError::param("fractions", format!("{bad} is outside [0, 1]")));
        }
        if self.max_attempts == 0 {
            return Err(StudyError::param("max-attempts", "must be at least 1"));
        }
        Ok(())
    }
}

/// One row of Table 4.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E3Row {
    /// Fraction of the unrecognised failures that are truly transient.
    pub fraction: f64,
    /// `k = int(60 · fraction)`: how many of them.
    pub truly_transient_unknowns: usize,
    /// The classifier's default class ("permanent" or "transient").
    pub default: FailureClass,
    /// Attempts made in total.
    pub attempts: u32,
    /// Failures that succeeded on a retry.
    pub recovered: u32,
    /// Retries of failures that could never succeed.
    pub wasted: u32,
    /// Truly transient failures given up on.
    pub lost: u32,
    /// Failures that ended as poison (dead-lettered).
    pub dead_letters: u32,
}

/// What happened to one failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Attempts it took.
    pub attempts: u32,
    /// Whether a retry succeeded.
    pub recovered: bool,
    /// Its final class when it was given up on.
    pub final_class: Option<FailureClass>,
}

/// Runs one failure with `message` through the classifier and retry policy.
pub fn run_failure(
    classifier: &Classifier,
    retry: &RetryPolicy,
    message: &str,
    truly_transient: bool,
    rng: &mut PyRandom,
) -> Outcome {
    let failure = Failure { message, code: None };
    let mut attempt = 1u32;
    loop {
        let class = classifier.classify(&failure, attempt, retry.max_attempts);
        match retry.decide(class, attempt, rng) {
            RetryDecision::Retry { next_attempt, .. } => {
                attempt = next_attempt;
                if truly_transient {
                    return Outcome { attempts: attempt, recovered: true, final_class: None };
                }
            }
            RetryDecision::GiveUp { class } => {
                return Outcome { attempts: attempt, recovered: false, final_class: Some(class) };
            }
        }
    }
}

/// `int(60 · fraction)`, as Python truncates it.
pub fn truly_transient_unknowns(fraction: f64) -> usize {
    (UNKNOWN_COUNT as f64 * fraction).trunc() as usize
}

/// One row: the workload at `fraction` under `default`.
pub fn run_row(fraction: f64, default: FailureClass, max_attempts: u32) -> E3Row {
    let classifier = Classifier::new(&ClassifierConfig { default_class: default, ..ClassifierConfig::default() });
    let retry = RetryPolicy { max_attempts, ..RetryPolicy::default() };
    // Retry delays are drawn but never waited for: they do not reach the totals.
    let mut rng = PyRandom::new(0);
    let k = truly_transient_unknowns(fraction);
    let workload = std::iter::repeat_n((TRANSIENT_TEXT, true), TRANSIENT_COUNT)
        .chain(std::iter::repeat_n((PERMANENT_TEXT, false), PERMANENT_COUNT))
        .chain((0..UNKNOWN_COUNT).map(|i| (UNKNOWN_TEXT, i < k)));
    let mut row = E3Row {
        fraction,
        truly_transient_unknowns: k,
        default,
        attempts: 0,
        recovered: 0,
        wasted: 0,
        lost: 0,
        dead_letters: 0,
    };
    for (text, truly_transient) in workload {
        let o = run_failure(&classifier, &retry, text, truly_transient, &mut rng);
        row.attempts += o.attempts;
        if o.recovered {
            row.recovered += 1;
        } else if truly_transient {
            row.lost += 1;
        } else {
            row.wasted += o.attempts - 1;
        }
        if o.final_class == Some(FailureClass::Poison) {
            row.dead_letters += 1;
        }
    }
    row
}

/// E3's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct E3Result {
    /// Fractions outer, defaults (permanent, transient) inner.
    pub rows: Vec<E3Row>,
}

/// Runs E3.
pub fn run(params: &E3Params, progress: &dyn Progress) -> Result<E3Result, StudyError> {
    params.validate()?;
    progress.stage("E3 default class", params.fractions.len() as u64 * 2);
    let mut rows = Vec::new();
    for &f in &params.fractions {
        for default in [FailureClass::Permanent, FailureClass::Transient] {
            rows.push(run_row(f, default, params.max_attempts));
            progress.advance(1);
        }
    }
    Ok(E3Result { rows })
}

impl E3Result {
    /// Table 4, as the paper prints it.
    pub fn table4(&self) -> Table {
        let mut t = Table::new(
            "Table 4 — cost of each default, by how retryable the unknowns really are.",
            &["truly transient", "default", "attempts", "recovered", "wasted retries", "lost work", "dead-letters"],
        );
        for r in &self.rows {
            t.push(vec![
                percent(r.fraction, 0),
                r.default.to_string(),
                r.attempts.to_string(),
                r.recovered.to_string(),
                r.wasted.to_string(),
                r.lost.to_string(),
                r.dead_letters.to_string(),
            ]);
        }
        t
    }
}
