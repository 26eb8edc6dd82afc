//! The report: every measurement with its ratios beside it (all measured in
//! the same run), the targets checked against them, as a table for
//! people or JSON for machines.

use std::fmt::Write as _;

use serde::Serialize;

use super::launcher::StoreKind;
use super::measurement::{Measurement, Scenario, paired_ratio};

/// The subject name of our own server's rows.
pub(crate) const OURS: &str = "mcp-tasks";
/// The subject name of the rmcp peer's rows.
pub(crate) const PEER: &str = "rmcp in-memory";

/// Where and how the run was made.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Setting {
    pub(crate) store: StoreKind,
    pub(crate) quick: bool,
    pub(crate) runs: usize,
    pub(crate) seconds_per_measurement: f64,
    pub(crate) cores: usize,
    pub(crate) os: String,
    pub(crate) version: String,
}

/// A measurement divided by another of the same run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Ratio {
    /// What it is divided by, e.g. `rmcp in-memory` or `1 stored`.
    pub(crate) against: String,
    pub(crate) ratio: f64,
}

/// One line of the table.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    #[serde(flatten)]
    pub(crate) measurement: Measurement,
    pub(crate) ratios: Vec<Ratio>,
}

/// One of the targets and whether this run reached it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetCheck {
    pub(crate) target: String,
    pub(crate) measured: f64,
    pub(crate) goal: f64,
    /// `at least` or `at most`.
    pub(crate) bound: &'static str,
    pub(crate) met: bool,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    pub(crate) setting: Setting,
    pub(crate) rows: Vec<Row>,
    pub(crate) targets: Vec<TargetCheck>,
}

impl Report {
    /// Puts the ratios beside every measurement and checks the targets.
    pub(crate) fn new(setting: Setting, measurements: Vec<Measurement>) -> Report {
        let find = |scenario: Scenario, subject: &str, clients: Option<usize>, stored: Option<u64>| {
            measurements
                .iter()
                .find(|m| m.scenario == scenario && m.subject == subject && m.clients == clients && m.stored == stored)
        };
        let raw = measurements.iter().find(|m| m.scenario == Scenario::SqliteRawCommits);
        let mut rows = Vec::new();
        for m in &measurements {
            let mut ratios = Vec::new();
            let rate = |other: &Measurement| m.per_second / other.per_second.max(f64::MIN_POSITIVE);
            if m.scenario == Scenario::ReaperSweep
                && let Some(smallest) = measurements
                    .iter()
                    .filter(|o| o.scenario == Scenario::ReaperSweep && o.stored < m.stored)
                    .min_by_key(|o| o.stored)
            {
                // A time, not a rate: this sweep's time over the smallest store's.
                ratios.push(Ratio {
                    against: format!("own sweep, {} rows", smallest.stored.unwrap_or_default()),
                    ratio: m.seconds / smallest.seconds.max(f64::MIN_POSITIVE),
                });
            }
            if m.subject == OURS && !matches!(m.scenario, Scenario::ResidentMemory | Scenario::ReaperSweep) {
                // Run by run when the two were measured turn about; a stored
                // size, measured on each server apart, by its medians.
                if let Some(beside) = &m.peer {
                    ratios.push(Ratio { against: PEER.to_owned(), ratio: paired_ratio(&m.run_rates, &beside.run_rates) });
                } else if let Some(peer) = find(m.scenario, PEER, m.clients, m.stored) {
                    ratios.push(Ratio { against: PEER.to_owned(), ratio: rate(peer) });
                }
                if m.scenario == Scenario::Creations
                    && let Some(raw) = raw
                {
                    ratios.push(Ratio { against: "SQLite raw commits".to_owned(), ratio: rate(raw) });
                }
            }
            // A stored size (either server's) against the small stores of its
            // kind measured turn about with it, run by run: the same mix
            // (what flatness is checked on), and one live task.
            for (against, beside) in [(SAME_MIX, &m.same_mix), (ONE_LIVE, &m.one_live)] {
                if let Some(beside) = beside {
                    let ratio = paired_ratio(&m.run_rates, &beside.run_rates);
                    ratios.push(Ratio { against: against.to_owned(), ratio });
                }
            }
            rows.push(Row { measurement: m.clone(), ratios });
        }
        let targets = targets(&rows);
        Report { setting, rows, targets }
    }

    /// The report as a table.
    pub(crate) fn table(&self) -> String {
        let s = &self.setting;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "mcp-tasks {} bench: store {:?}, {} cores, {}; median of {} run(s), {} s per timed measurement{}",
            s.version,
            s.store,
            s.cores,
            s.os,
            s.runs,
            s.seconds_per_measurement,
            if s.quick { " (quick)" } else { "" }
        );
        let _ = writeln!(
            out,
            "{:<16} {:<15} {:>7} {:>9} {:>11} {:>8} {:>8} {:>8} {:>6}  ratios (same run)",
            "scenario", "server", "clients", "stored", "per second", "p50 ms", "p99 ms", "p99.9", "errors"
        );
        for row in &self.rows {
            let m = &row.measurement;
            let (p50, p99, p999) = match m.latency {
                Some(l) => (format!("{:.2}", l.p50_ms), format!("{:.2}", l.p99_ms), format!("{:.2}", l.p999_ms)),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let rate = match (m.scenario, m.bytes) {
                (Scenario::ResidentMemory, Some(bytes)) => format!("{:.1} MB", bytes as f64 / 1e6),
                (Scenario::ReaperSweep | Scenario::LeaseTriage, _) => format!("{:.1} ms", m.seconds * 1e3),
                _ => format!("{:.0}", m.per_second),
            };
            let ratios: Vec<String> = row.ratios.iter().map(|r| format!("{:.2}× {}", r.ratio, r.against)).collect();
            let _ = writeln!(
                out,
                "{:<16} {:<15} {:>7} {:>9} {:>11} {:>8} {:>8} {:>8} {:>6}  {}",
                m.scenario.label(),
                m.subject,
                m.clients.map_or("-".into(), |c| c.to_string()),
                m.stored.map_or("-".into(), |n| n.to_string()),
                rate,
                p50,
                p99,
                p999,
                m.errors,
                ratios.join(", ")
            );
        }
        if !self.targets.is_empty() {
            let _ = writeln!(out, "\ntargets (issue 13):");
            for t in &self.targets {
                let _ = writeln!(
                    out,
                    "  [{}] {}: {:.2} ({} {})",
                    if t.met { "met" } else { "NOT met" },
                    t.target,
                    t.measured,
                    t.bound,
                    t.goal
                );
            }
        }
        if let Some(e) = self.rows.iter().find_map(|r| r.measurement.first_error.as_deref()) {
            let _ = writeln!(out, "\nfirst error: {e}");
        }
        out
    }

    /// The report as pretty JSON.
    pub(crate) fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
    }
}

/// The targets this run can speak to.
fn targets(rows: &[Row]) -> Vec<TargetCheck> {
    let mut out = Vec::new();
    let row = |scenario: Scenario, clients: Option<usize>, stored: Option<u64>| {
        rows.iter().find(|r| {
            let m = &r.measurement;
            m.scenario == scenario && m.subject == OURS && m.clients == clients && m.stored == stored
        })
    };
    let ratio = |r: &Row, against: &str| r.ratios.iter().find(|x| x.against == against).map(|x| x.ratio);
    let mut check = |target: String, measured: Option<f64>, goal: f64, at_least: bool| {
        if let Some(measured) = measured {
            let met = if at_least { measured >= goal } else { measured <= goal };
            out.push(TargetCheck { target, measured, goal, bound: if at_least { "at least" } else { "at most" }, met });
        }
    };
    if let Some(r) = row(Scenario::Polls, Some(POLL_CLIENTS), Some(1)) {
        check(format!("tasks/get, 1 stored, {POLL_CLIENTS} clients, vs rmcp in-memory"), ratio(r, PEER), 0.9, true);
    }
    for r in rows.iter().filter(|r| {
        let m = &r.measurement;
        m.scenario == Scenario::Polls && m.subject == OURS && m.stored.is_some_and(|n| n >= 100_000)
    }) {
        let stored = r.measurement.stored.unwrap_or_default();
        check(format!("tasks/get, {stored} stored, vs {SAME_MIX}"), ratio(r, SAME_MIX), 0.9, true);
    }
    if let Some(r) = row(Scenario::Creations, Some(CREATION_CLIENTS), None) {
        check(format!("creations, {CREATION_CLIENTS} clients, vs rmcp in-memory"), ratio(r, PEER), 5.0, true);
        check(
            format!("creations, {CREATION_CLIENTS} clients, vs SQLite raw commits"),
            ratio(r, "SQLite raw commits"),
            3.0,
            true,
        );
        check(
            format!("creations, {CREATION_CLIENTS} clients, p99 ms"),
            r.measurement.latency.map(|l| l.p99_ms),
            20.0,
            false,
        );
    }
    if let Some(r) = rows.iter().find(|r| r.measurement.scenario == Scenario::EndToEnd && r.measurement.subject == OURS) {
        check("end-to-end trivial tasks per second".to_owned(), Some(r.measurement.per_second), 10_000.0, true);
    }
    if let Some(r) = rows
        .iter()
        .filter(|r| r.measurement.scenario == Scenario::ReaperSweep && !r.ratios.is_empty())
        .max_by_key(|r| r.measurement.stored)
    {
        let against = &r.ratios[0].against;
        let stored = r.measurement.stored.unwrap_or_default();
        check(format!("reaper sweep time, {stored} rows vs {against}"), Some(r.ratios[0].ratio), 2.0, false);
    }
    if let Some(r) = rows
        .iter()
        .find(|r| r.measurement.scenario == Scenario::ResidentMemory && r.measurement.stored.is_some_and(|n| n >= 100_000))
    {
        let mb = r.measurement.bytes.map(|b| b as f64 / 1e6);
        check(format!("resident MB with {} live tasks", r.measurement.stored.unwrap_or_default()), mb, 200.0, false);
    }
    out
}

/// A stored size's ratio to the same mix in the smallest store (one finished
/// task, one live): the flatness target's, the store's size the only difference.
const SAME_MIX: &str = "own, same mix, 2 stored";
/// A stored size's ratio to one live task stored: besides the size, it
/// holds the finished tasks' longer answers against the mix.
const ONE_LIVE: &str = "own, 1 live stored";

/// The clients of the headline `tasks/get` comparison (the 32 connections).
pub(crate) const POLL_CLIENTS: usize = 32;
/// The clients of the headline creations comparison (the 64 connections).
pub(crate) const CREATION_CLIENTS: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::bench::measurement::Beside;

    fn m(scenario: Scenario, subject: &str, clients: usize, stored: Option<u64>, per_second: f64) -> Measurement {
        Measurement {
            scenario,
            subject: subject.into(),
            clients: Some(clients),
            stored,
            count: per_second as u64,
            errors: 0,
            first_error: None,
            seconds: 1.0,
            per_second,
            latency: Some(super::super::measurement::Latency { p50_ms: 1.0, p99_ms: 25.0, p999_ms: 30.0 }),
            bytes: None,
            same_mix: None,
            one_live: None,
            peer: None,
            run_rates: Vec::new(),
            runs: 1,
        }
    }

    fn setting() -> Setting {
        Setting {
            store: StoreKind::Sqlite,
            quick: true,
            runs: 1,
            seconds_per_measurement: 1.0,
            cores: 2,
            os: "linux".into(),
            version: "0".into(),
        }
    }

    #[test]
    fn ratios_sit_beside_each_figure_and_targets_are_checked() {
        let report = Report::new(
            setting(),
            vec![
                m(Scenario::Polls, OURS, 32, Some(1), 900.0),
                m(Scenario::Polls, PEER, 32, Some(1), 1000.0),
                Measurement {
                    same_mix: Some(Beside { per_second: 600.0, run_rates: vec![600.0] }),
                    one_live: Some(Beside { per_second: 900.0, run_rates: vec![900.0] }),
                    run_rates: vec![450.0],
                    ..m(Scenario::Polls, OURS, 32, Some(100_000), 450.0)
                },
                m(Scenario::Creations, OURS, 64, None, 6000.0),
                m(Scenario::Creations, PEER, 64, None, 1500.0),
                m(Scenario::SqliteRawCommits, "SQLite", 1, None, 3000.0),
            ],
        );
        let ratios: Vec<(String, f64)> =
            report.rows.iter().flat_map(|r| r.ratios.iter().map(|x| (x.against.clone(), x.ratio))).collect();
        assert_eq!(
            ratios,
            vec![
                (PEER.to_owned(), 0.9),
                (SAME_MIX.to_owned(), 0.75),
                (ONE_LIVE.to_owned(), 0.5),
                (PEER.to_owned(), 4.0),
                ("SQLite raw commits".to_owned(), 2.0)
            ]
        );
        let met: Vec<(String, bool)> = report.targets.iter().map(|t| (t.target.clone(), t.met)).collect();
        assert_eq!(
            met,
            vec![
                ("tasks/get, 1 stored, 32 clients, vs rmcp in-memory".to_owned(), true),
                ("tasks/get, 100000 stored, vs own, same mix, 2 stored".to_owned(), false),
                ("creations, 64 clients, vs rmcp in-memory".to_owned(), false),
                ("creations, 64 clients, vs SQLite raw commits".to_owned(), false),
                ("creations, 64 clients, p99 ms".to_owned(), false),
            ]
        );
        let table = report.table();
        assert!(table.contains("0.90× rmcp in-memory"), "{table}");
        assert!(table.contains("[NOT met] creations, 64 clients, p99 ms: 25.00 (at most 20)"), "{table}");
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["rows"][0]["scenario"], "polls");
        assert_eq!(json["rows"][0]["latency"]["p99_ms"], 25.0);
        assert_eq!(json["setting"]["store"], "sqlite");
    }

    #[test]
    fn a_stored_figure_is_held_to_the_same_mix_run_by_run() {
        let mut stored = m(Scenario::Polls, OURS, 32, Some(1_000_000), 450.0);
        // The second round ran slow on every server; run by run it cancels.
        stored.run_rates = vec![450.0, 300.0, 460.0];
        stored.same_mix = Some(Beside { per_second: 500.0, run_rates: vec![500.0, 330.0, 520.0] });
        stored.one_live = Some(Beside { per_second: 600.0, run_rates: vec![600.0, 400.0, 610.0] });
        let report = Report::new(setting(), vec![m(Scenario::Polls, OURS, 32, Some(1), 900.0), stored]);
        let row = &report.rows[1];
        let ratios: Vec<(&str, f64)> = row.ratios.iter().map(|r| (r.against.as_str(), r.ratio)).collect();
        assert_eq!(ratios, [(SAME_MIX, 0.9), (ONE_LIVE, 0.75)]);
        let check = report.targets.iter().find(|t| t.target.contains("1000000 stored")).expect("the flatness target");
        assert!(check.met, "0.9 of the same mix run by run, though 0.75 of one live task's and 0.5 of the table's");
        assert_eq!(check.measured, 0.9);
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["rows"][1]["same_mix"]["per_second"], 500.0);
        assert_eq!(json["rows"][1]["one_live"]["run_rates"][1], 400.0);
        assert_eq!(json["rows"][1]["run_rates"][2], 460.0);
        assert!(json["rows"][0].get("same_mix").is_none());
    }

    #[test]
    fn a_figure_measured_turn_about_with_the_peer_is_divided_run_by_run() {
        // The second round ran slow on both servers.
        let mut ours = m(Scenario::Creations, OURS, 64, None, 6000.0);
        ours.run_rates = vec![6000.0, 2000.0, 6100.0];
        // Each figure is its median run: 6000 and 1000.
        let mut peer = m(Scenario::Creations, PEER, 64, None, 1000.0);
        peer.run_rates = vec![1500.0, 500.0, 1000.0];
        ours.peer = Some(Beside::of(&peer));
        let report = Report::new(setting(), vec![ours, peer]);
        let ratio = report.rows[0].ratios.iter().find(|r| r.against == PEER).expect("a ratio to the peer");
        assert_eq!(ratio.ratio, 4.0, "quotients 4.0, 4.0, 6.1; the medians' would give 6.0");
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["rows"][0]["peer"]["run_rates"][1], 500.0);
    }
}
