//! Failure classification: transient, permanent or poison (paper §4.1–4.2).
//!
//! A status code decides first; then permanent markers (so "invalid
//! connection string" is permanent); then transient markers; else the
//! configured default, **permanent** unless an operator says otherwise. The
//! attempt ceiling overrides everything: a transient failure on the last
//! allowed attempt is poison.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What kind of failure this is, and so whether it deserves another attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// May succeed if repeated.
    Transient,
    /// Will fail the same way forever.
    Permanent,
    /// Transient in origin but out of attempts: operationally permanent, and
    /// dead-lettered.
    Poison,
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureClass::Transient => "transient",
            FailureClass::Permanent => "permanent",
            FailureClass::Poison => "poison",
        })
    }
}

/// The paper's transient markers (case-insensitive substrings).
pub const DEFAULT_TRANSIENT_MARKERS: &[&str] = &[
    "timeout",
    "timed out",
    "connection",
    "connection reset",
    "unavailable",
    "temporarily",
    "throttl",
    "rate limit",
    "too many requests",
    "overloaded",
    "deadline exceeded",
    "broken pipe",
    "econnreset",
];

/// The paper's permanent markers (case-insensitive substrings).
pub const DEFAULT_PERMANENT_MARKERS: &[&str] = &[
    "invalid",
    "malformed",
    "schema",
    "validation",
    "unauthorized",
    "forbidden",
    "not found",
    "unknown tool",
    "unsupported",
    "parse error",
    "permission denied",
];

/// HTTP-like codes that mean "try again".
pub const DEFAULT_TRANSIENT_CODES: &[u16] = &[408, 425, 429, 500, 502, 503, 504];

/// HTTP-like codes that mean "this will never work".
pub const DEFAULT_PERMANENT_CODES: &[u16] = &[400, 401, 403, 404, 405, 409, 410, 422];

/// A failure as the classifier sees it: text, and a status code if the tool
/// surfaced one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure<'a> {
    /// The error text.
    pub message: &'a str,
    /// An HTTP-shaped status code, if any.
    pub code: Option<u16>,
}

/// Classifier configuration: markers, codes and the default class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClassifierConfig {
    /// Substrings that mark a failure transient.
    pub transient_markers: Vec<String>,
    /// Substrings that mark a failure permanent (checked before transient).
    pub permanent_markers: Vec<String>,
    /// Codes that mark a failure transient.
    pub transient_codes: Vec<u16>,
    /// Codes that mark a failure permanent.
    pub permanent_codes: Vec<u16>,
    /// The class of an error nothing recognises. Permanent by default (§4.2).
    pub default_class: FailureClass,
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        ClassifierConfig {
            transient_markers: DEFAULT_TRANSIENT_MARKERS.iter().map(|s| s.to_string()).collect(),
            permanent_markers: DEFAULT_PERMANENT_MARKERS.iter().map(|s| s.to_string()).collect(),
            transient_codes: DEFAULT_TRANSIENT_CODES.to_vec(),
            permanent_codes: DEFAULT_PERMANENT_CODES.to_vec(),
            default_class: FailureClass::Permanent,
        }
    }
}

impl ClassifierConfig {
    /// Makes `marker` transient (removing it from the permanent list): what
    /// an operator does once they have learned an error is retryable.
    pub fn promote(&mut self, marker: &str) {
        let m = marker.to_lowercase();
        self.permanent_markers.retain(|p| p.to_lowercase() != m);
        if !self.transient_markers.iter().any(|t| t.to_lowercase() == m) {
            self.transient_markers.push(m);
        }
    }

    /// Makes `marker` permanent (removing it from the transient list).
    pub fn demote(&mut self, marker: &str) {
        let m = marker.to_lowercase();
        self.transient_markers.retain(|t| t.to_lowercase() != m);
        if !self.permanent_markers.iter().any(|p| p.to_lowercase() == m) {
            self.permanent_markers.push(m);
        }
    }
}

/// Classifies failures by code, then markers, then the default.
///
/// ```
/// use mcp_tasks_core::{Classifier, Failure, FailureClass};
///
/// let c = Classifier::default();
/// let timeout = Failure { message: "upstream timeout", code: None };
/// assert_eq!(c.classify(&timeout, 1, 3), FailureClass::Transient);
/// // The ceiling overrides: the same failure on the last attempt is poison.
/// assert_eq!(c.classify(&timeout, 3, 3), FailureClass::Poison);
/// // A code decides before the text; permanent markers before transient ones.
/// assert_eq!(c.classify(&Failure { message: "timeout", code: Some(404) }, 1, 3), FailureClass::Permanent);
/// assert_eq!(c.classify(&Failure { message: "invalid connection string (timeout)", code: None }, 1, 3), FailureClass::Permanent);
/// // Nothing recognised: permanent by default.
/// assert_eq!(c.classify(&Failure { message: "E_BADSTATE", code: None }, 1, 3), FailureClass::Permanent);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Classifier {
    transient_markers: Vec<String>,
    permanent_markers: Vec<String>,
    transient_codes: Vec<u16>,
    permanent_codes: Vec<u16>,
    default_class: FailureClass,
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier::new(&ClassifierConfig::default())
    }
}

impl Classifier {
    /// A classifier for `config` (markers are matched case-insensitively).
    pub fn new(config: &ClassifierConfig) -> Self {
        let lower = |v: &[String]| v.iter().map(|s| s.to_lowercase()).collect::<Vec<_>>();
        Classifier {
            transient_markers: lower(&config.transient_markers),
            permanent_markers: lower(&config.permanent_markers),
            transient_codes: config.transient_codes.clone(),
            permanent_codes: config.permanent_codes.clone(),
            default_class: config.default_class,
        }
    }

    /// The class of `failure` on its own, before the attempt ceiling.
    pub fn class_of(&self, failure: &Failure<'_>) -> FailureClass {
        if let Some(code) = failure.code {
            if self.transient_codes.contains(&code) {
                return FailureClass::Transient;
            }
            if self.permanent_codes.contains(&code) {
                return FailureClass::Permanent;
            }
        }
        let text = failure.message.to_lowercase();
        if self.permanent_markers.iter().any(|m| text.contains(m.as_str())) {
            FailureClass::Permanent
        } else if self.transient_markers.iter().any(|m| text.contains(m.as_str())) {
            FailureClass::Transient
        } else {
            self.default_class
        }
    }

    /// The class after the attempt ceiling: `attempts` counts the attempt
    /// that just failed; at or past `max_attempts` a transient failure is poison.
    pub fn classify(&self, failure: &Failure<'_>, attempts: u32, max_attempts: u32) -> FailureClass {
        match self.class_of(failure) {
            FailureClass::Transient if attempts >= max_attempts => FailureClass::Poison,
            class => class,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(m: &str) -> Failure<'_> {
        Failure { message: m, code: None }
    }

    #[test]
    fn paper_examples() {
        let c = Classifier::default();
        assert_eq!(c.class_of(&text("upstream timeout after 30s")), FailureClass::Transient);
        assert_eq!(c.class_of(&text("invalid arguments: 'limit' must be an integer")), FailureClass::Permanent);
        assert_eq!(c.class_of(&text("widget subsystem returned E_BADSTATE")), FailureClass::Permanent);
        assert_eq!(c.class_of(&text("Invalid connection string")), FailureClass::Permanent);
        assert_eq!(c.class_of(&text("Connection RESET by peer")), FailureClass::Transient);
    }

    #[test]
    fn codes_decide_before_text() {
        let c = Classifier::default();
        assert_eq!(c.class_of(&Failure { message: "invalid", code: Some(503) }), FailureClass::Transient);
        assert_eq!(c.class_of(&Failure { message: "timeout", code: Some(404) }), FailureClass::Permanent);
        // A code in neither set falls through to the text.
        assert_eq!(c.class_of(&Failure { message: "timeout", code: Some(418) }), FailureClass::Transient);
    }

    #[test]
    fn ceiling_turns_transient_into_poison_only() {
        let c = Classifier::default();
        let t = text("service unavailable");
        assert_eq!(c.classify(&t, 2, 3), FailureClass::Transient);
        assert_eq!(c.classify(&t, 3, 3), FailureClass::Poison);
        assert_eq!(c.classify(&text("forbidden"), 3, 3), FailureClass::Permanent);
    }

    #[test]
    fn default_class_and_promotion_are_configurable() {
        let mut cfg = ClassifierConfig { default_class: FailureClass::Transient, ..Default::default() };
        assert_eq!(Classifier::new(&cfg).class_of(&text("E_BADSTATE")), FailureClass::Transient);
        cfg.default_class = FailureClass::Permanent;
        cfg.promote("E_BADSTATE");
        assert_eq!(Classifier::new(&cfg).class_of(&text("widget E_BADSTATE")), FailureClass::Transient);
        cfg.promote("not found");
        assert_eq!(Classifier::new(&cfg).class_of(&text("Not Found")), FailureClass::Transient);
        cfg.demote("timeout");
        assert_eq!(Classifier::new(&cfg).class_of(&text("timeout")), FailureClass::Permanent);
    }
}
