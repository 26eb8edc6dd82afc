//! Choosing experiments, running them, and presenting the results as the
//! paper's tables or as JSON.

use std::str::FromStr;

use serde_json::{Value, json};

use crate::e1::{self, E1Result};
use crate::e2::{self, E2Params, E2Result};
use crate::e3::{self, E3Params, E3Result};
use crate::e4::{self, E4Params, E4Result};
use crate::e5::{self, E5Result};
use crate::error::StudyError;
use crate::plot::Figures;
use crate::progress::Progress;
use crate::table::Table;

/// Which experiment to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Experiment {
    /// Handle survival across a restart.
    E1,
    /// Poll cost against staleness.
    E2,
    /// The price of the default class.
    E3,
    /// Backoff against the orphan window.
    E4,
    /// Beyond the paper: the hint and the orphan-window cap, measured.
    E5,
    /// All five.
    All,
}

impl FromStr for Experiment {
    type Err = StudyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "e1" => Experiment::E1,
            "e2" => Experiment::E2,
            "e3" => Experiment::E3,
            "e4" => Experiment::E4,
            "e5" => Experiment::E5,
            "all" => Experiment::All,
            _ => return Err(StudyError::UnknownExperiment(s.to_owned())),
        })
    }
}

impl Experiment {
    fn includes(self, e: Experiment) -> bool {
        self == Experiment::All || self == e
    }
}

/// Every experiment's parameters (each defaults to the paper's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StudyParams {
    /// E2's (and E5a's).
    pub e2: E2Params,
    /// E3's.
    pub e3: E3Params,
    /// E4's (and E5b's).
    pub e4: E4Params,
}

impl StudyParams {
    /// Checks every parameter, whichever experiment runs: a bad value is
    /// refused even when the experiment it belongs to is not selected.
    pub fn validate(&self) -> Result<(), StudyError> {
        self.e2.validate()?;
        self.e3.validate()?;
        self.e4.validate()
    }
}

/// The results of what was run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// E1, if run.
    pub e1: Option<E1Result>,
    /// E2, if run.
    pub e2: Option<E2Result>,
    /// E3, if run.
    pub e3: Option<E3Result>,
    /// E4, if run.
    pub e4: Option<E4Result>,
    /// E5, if run.
    pub e5: Option<E5Result>,
    which: Option<Experiment>,
}

/// Runs `which` with `params`.
pub async fn run(which: Experiment, params: &StudyParams, progress: &dyn Progress) -> Result<Report, StudyError> {
    params.validate()?;
    let mut r = Report { which: Some(which), ..Report::default() };
    if which.includes(Experiment::E1) {
        r.e1 = Some(e1::run(progress).await?);
    }
    if which.includes(Experiment::E2) {
        r.e2 = Some(e2::run(&params.e2, progress)?);
    }
    if which.includes(Experiment::E3) {
        r.e3 = Some(e3::run(&params.e3, progress)?);
    }
    if which.includes(Experiment::E4) {
        r.e4 = Some(e4::run(&params.e4, progress).await?);
    }
    if which.includes(Experiment::E5) {
        r.e5 = Some(e5::run(&params.e2, &params.e4, progress).await?);
    }
    Ok(r)
}

impl Report {
    /// The tables, in the paper's order, then Table 6 (E5).
    pub fn tables(&self) -> Vec<Table> {
        let mut t = Vec::new();
        if let Some(r) = &self.e1 {
            t.push(r.table1());
        }
        if let Some(r) = &self.e2 {
            t.push(r.table2());
            t.push(r.table3());
        }
        if let Some(r) = &self.e3 {
            t.push(r.table4());
        }
        if let Some(r) = &self.e4 {
            t.push(r.table5());
        }
        if let Some(r) = &self.e5 {
            t.push(r.table6a());
            t.push(r.table6b());
        }
        t
    }

    /// The tables as text, separated by blank lines.
    pub fn text(&self) -> String {
        self.tables().iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    }

    /// JSON: one experiment's object for a single experiment, or an object
    /// keyed `e1`…`e5` for `all`.
    pub fn json(&self) -> Value {
        let v = |x: &dyn erased::Ser| x.value();
        let parts: Vec<(&str, Value)> = [
            self.e1.as_ref().map(|r| ("e1", v(r))),
            self.e2.as_ref().map(|r| ("e2", v(r))),
            self.e3.as_ref().map(|r| ("e3", v(r))),
            self.e4.as_ref().map(|r| ("e4", v(r))),
            self.e5.as_ref().map(|r| ("e5", v(r))),
        ]
        .into_iter()
        .flatten()
        .collect();
        match (self.which, parts.len()) {
            (Some(Experiment::All), _) | (None, _) => Value::Object(parts.into_iter().map(|(k, v)| (k.into(), v)).collect()),
            (_, 1) => parts.into_iter().next().map(|(_, v)| v).unwrap_or(Value::Null),
            _ => json!({}),
        }
    }

    /// What `--plot` draws for this report.
    pub fn figures(&self) -> Figures<'_> {
        Figures { e2: self.e2.as_ref(), e3: self.e3.as_ref(), e4: self.e4.as_ref(), e5: self.e5.as_ref() }
    }
}

mod erased {
    //! Serialising any result to a `Value` through one object-safe trait.
    pub(super) trait Ser {
        fn value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or_else(|e| serde_json::json!({"error": e.to_string()}))
        }
    }
}
