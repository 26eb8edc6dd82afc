//! One measured figure — a rate, its latency percentiles, or a size — and
//! the median of repeated runs of it.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::http_load::LoadOutcome;

/// What was measured (the scenarios).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Scenario {
    /// 1. Durable creations: `tools/call` answered with a task handle.
    Creations,
    /// 2. `tasks/get` with `stored` tasks in the store.
    Polls,
    /// 3. Created → run → completed → seen by a poll.
    EndToEnd,
    /// 4. The reaper's pass over `stored` rows of which 100 are due.
    ReaperSweep,
    /// 4. Triage of `stored` lapsed leases.
    LeaseTriage,
    /// 5. The server's resident memory with `stored` live tasks.
    ResidentMemory,
    /// 6. SQLite's raw single-row fsync'd commit rate on the same disk.
    SqliteRawCommits,
}

impl Scenario {
    /// The name a table shows.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Scenario::Creations => "creations",
            Scenario::Polls => "tasks/get",
            Scenario::EndToEnd => "end-to-end",
            Scenario::ReaperSweep => "reaper sweep",
            Scenario::LeaseTriage => "lease triage",
            Scenario::ResidentMemory => "resident memory",
            Scenario::SqliteRawCommits => "raw commits",
        }
    }
}

/// Latency percentiles, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Latency {
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) p999_ms: f64,
}

impl Latency {
    /// Percentiles of a histogram of microseconds (`None` when it is empty).
    pub(crate) fn of(micros: &Histogram<u64>) -> Option<Latency> {
        if micros.is_empty() {
            return None;
        }
        let ms = |q: f64| micros.value_at_quantile(q) as f64 / 1000.0;
        Some(Latency { p50_ms: ms(0.50), p99_ms: ms(0.99), p999_ms: ms(0.999) })
    }
}

/// One figure, as the table and the JSON show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Measurement {
    pub(crate) scenario: Scenario,
    /// Who answered: `mcp-tasks`, `rmcp in-memory`, or `SQLite` for raw commits.
    pub(crate) subject: String,
    /// Concurrent clients (connections), when a load was sent.
    pub(crate) clients: Option<usize>,
    /// Tasks in the store while measured.
    pub(crate) stored: Option<u64>,
    /// Operations completed (requests answered, tasks seen completed,
    /// commits, rows swept or triaged).
    pub(crate) count: u64,
    /// Requests that failed (HTTP or JSON-RPC errors).
    pub(crate) errors: u64,
    /// The first failure, if any.
    pub(crate) first_error: Option<String>,
    pub(crate) seconds: f64,
    /// `count / seconds`.
    pub(crate) per_second: f64,
    pub(crate) latency: Option<Latency>,
    /// Resident memory, for [`Scenario::ResidentMemory`].
    pub(crate) bytes: Option<u64>,
    /// For `tasks/get` with many tasks stored: the same server kind's figure
    /// with the same mix in the smallest store (one finished task, one
    /// live), measured turn about with this one; the flatness target is
    /// checked on the ratio to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) same_mix: Option<Beside>,
    /// For `tasks/get` with many tasks stored: the same server kind's
    /// figure with one live task stored, measured turn about with this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) one_live: Option<Beside>,
    /// Ours, for a figure measured turn about with the peer (`tasks/get`
    /// with one task stored, creations, end to end): the peer's figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) peer: Option<Beside>,
    /// Every run's rate, in the order run (a figure measured turn about with
    /// another is divided by it run by run: see [`paired_ratio`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) run_rates: Vec<f64>,
    /// How many runs this is the median of.
    pub(crate) runs: usize,
}

impl Measurement {
    /// A rate measured by the load generator.
    pub(crate) fn of_load(
        scenario: Scenario,
        subject: &str,
        clients: usize,
        stored: Option<u64>,
        load: &LoadOutcome,
    ) -> Measurement {
        Measurement {
            scenario,
            subject: subject.to_owned(),
            clients: Some(clients),
            stored,
            count: load.answered,
            errors: load.errors,
            first_error: load.first_error.clone(),
            seconds: load.elapsed.as_secs_f64(),
            per_second: load.per_second(),
            latency: Latency::of(&load.latency_us),
            bytes: None,
            same_mix: None,
            one_live: None,
            peer: None,
            run_rates: Vec::new(),
            runs: 1,
        }
    }

    /// The run whose rate is the median (its latencies stay its own, so
    /// the percentiles and the rate come from one run), with the errors of
    /// every run added up.
    pub(crate) fn median(mut runs: Vec<Measurement>) -> Measurement {
        assert!(!runs.is_empty(), "a median of no runs");
        let errors = runs.iter().map(|m| m.errors).sum();
        let first_error = runs.iter().find_map(|m| m.first_error.clone());
        let run_rates = runs.iter().map(|m| m.per_second).collect();
        let n = runs.len();
        runs.sort_by(|a, b| a.per_second.total_cmp(&b.per_second));
        let mut median = runs.swap_remove(n / 2);
        median.errors = errors;
        median.first_error = first_error;
        median.runs = n;
        median.run_rates = run_rates;
        median
    }
}

/// A figure measured turn about with another, kept beside it: its median
/// rate and every run's rate, in the order run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Beside {
    pub(crate) per_second: f64,
    pub(crate) run_rates: Vec<f64>,
}

impl Beside {
    /// `m`'s median rate and run rates.
    pub(crate) fn of(m: &Measurement) -> Beside {
        Beside { per_second: m.per_second, run_rates: m.run_rates.clone() }
    }
}

/// The median of the run-by-run quotients `ours[i] / theirs[i]` of two
/// figures measured turn about (the mean of the middle two for an even
/// count). Runs measured minutes apart on a shared machine differ by 10–20%
/// between rounds; two runs of one round share the round's speed, so their
/// quotient does not carry it, where a quotient of the two medians does.
pub(crate) fn paired_ratio(ours: &[f64], theirs: &[f64]) -> f64 {
    let mut quotients: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| a / b.max(f64::MIN_POSITIVE)).collect();
    assert!(!quotients.is_empty() && ours.len() == theirs.len(), "paired runs: {ours:?} and {theirs:?}");
    quotients.sort_by(f64::total_cmp);
    let n = quotients.len();
    if n % 2 == 1 { quotients[n / 2] } else { (quotients[n / 2 - 1] + quotients[n / 2]) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_second: f64, errors: u64) -> Measurement {
        Measurement {
            scenario: Scenario::Creations,
            subject: "mcp-tasks".into(),
            clients: Some(1),
            stored: None,
            count: per_second as u64,
            errors,
            first_error: (errors > 0).then(|| format!("{errors} failed")),
            seconds: 1.0,
            per_second,
            latency: None,
            bytes: None,
            same_mix: None,
            one_live: None,
            peer: None,
            run_rates: Vec::new(),
            runs: 1,
        }
    }

    #[test]
    fn the_median_run_is_kept_whole_and_errors_add_up() {
        let m = Measurement::median(vec![rate(300.0, 0), rate(100.0, 2), rate(200.0, 1)]);
        assert_eq!((m.per_second, m.count, m.runs, m.errors), (200.0, 200, 3, 3));
        assert_eq!(m.first_error.as_deref(), Some("2 failed"));
        assert_eq!(m.run_rates, [300.0, 100.0, 200.0], "every run's rate, in the order run");
    }

    #[test]
    fn a_paired_ratio_is_the_median_of_the_run_by_run_quotients() {
        // A slow round (the second) slows both figures: paired, it cancels.
        let ours = [90.0, 45.0, 100.0];
        let theirs = [100.0, 50.0, 80.0];
        assert_eq!(paired_ratio(&ours, &theirs), 0.9, "quotients 0.9, 0.9, 1.25");
        // The quotient of the medians (90 / 80) would carry the slow round.
        let even = paired_ratio(&[1.0, 2.0, 3.0, 4.0], &[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(even, 2.5, "the mean of the middle two");
    }

    #[test]
    fn percentiles_come_from_the_histogram_in_milliseconds() {
        let mut h = super::super::http_load::latency_histogram();
        for micros in 1..=1000u64 {
            h.record(micros * 10).unwrap();
        }
        let l = Latency::of(&h).unwrap();
        assert!((l.p50_ms - 5.0).abs() < 0.01, "{l:?}");
        assert!((l.p99_ms - 9.9).abs() < 0.01, "{l:?}");
        assert!((l.p999_ms - 9.99).abs() < 0.01, "{l:?}");
        assert_eq!(Latency::of(&super::super::http_load::latency_histogram()), None);
    }
}
