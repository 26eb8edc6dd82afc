//! `mcp-tasks study`: the paper's Tables 1–5 reproduced on the project's own
//! code, plus Table 6 (E5, beyond the paper). Defaults are the paper's values.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_tasks_study::{Experiment, Progress, StudyError, StudyParams};

/// Flags of `mcp-tasks study`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Which experiment: e1, e2, e3, e4, e5 (beyond the paper) or all.
    #[arg(default_value = "all")]
    experiment: String,
    /// Print machine-readable JSON instead of the tables.
    #[arg(long)]
    json: bool,
    /// Also write SVG figures into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// E2: nominal task durations, seconds [paper: 60,300,1800].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_name = "S,…")]
    durations: Option<Vec<f64>>,
    /// E2: fixed poll intervals, ms [paper: 250,1000,5000].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_name = "MS,…")]
    fixed_ms: Option<Vec<f64>>,
    /// E2: adaptive backoff ceilings, ms [paper: 10000,30000,60000].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_name = "MS,…")]
    adaptive_max_ms: Option<Vec<f64>>,
    /// E2: seeds per adaptive cell [paper: 20].
    #[arg(long, allow_negative_numbers = true)]
    seeds: Option<i64>,
    /// E2: completion phases per cell, spread over ±10 % [paper: 11].
    #[arg(long, allow_negative_numbers = true)]
    phases: Option<i64>,
    /// E3: fractions of unrecognised failures that are truly transient [paper: 0,0.25,0.5,0.75,1].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_name = "F,…")]
    fractions: Option<Vec<f64>>,
    /// E3: attempt ceiling [paper: 3].
    #[arg(long, allow_negative_numbers = true)]
    max_attempts: Option<i64>,
    /// E4: client backoff ceilings, ms [paper: 10000,60000,300000,900000].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_name = "MS,…")]
    max_backoff_ms: Option<Vec<f64>>,
    /// E4: server orphan windows, seconds [paper: 900,120].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_name = "S,…")]
    orphan_window_s: Option<Vec<f64>>,
    /// E4: how long the client waits on the never-finishing task, seconds [paper: 3600].
    #[arg(long, allow_negative_numbers = true)]
    task_duration_s: Option<f64>,
    /// E4: reaper period and client tick, seconds [paper: 30].
    #[arg(long, allow_negative_numbers = true)]
    sweep_interval_s: Option<f64>,
    /// E4: the client scheduler's seed [paper: 7].
    #[arg(long)]
    seed: Option<u64>,
}

fn count(name: &'static str, v: i64) -> Result<u32, StudyError> {
    u32::try_from(v)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| StudyError::param(name, format!("{v} is not a whole number from 1 to {}", u32::MAX)))
}

/// Overrides `slot` with the flag's value, if the flag was given.
fn set<T: Clone>(slot: &mut T, flag: &Option<T>) {
    if let Some(v) = flag {
        *slot = v.clone();
    }
}

/// Overrides a count with the flag's value, if given and a whole number from 1.
fn set_count(slot: &mut u32, name: &'static str, flag: Option<i64>) -> Result<(), StudyError> {
    if let Some(v) = flag {
        *slot = count(name, v)?;
    }
    Ok(())
}

impl Args {
    /// The paper's parameters, overridden by whatever flags were given.
    fn params(&self) -> Result<StudyParams, StudyError> {
        let mut p = StudyParams::default();
        set(&mut p.e2.durations_s, &self.durations);
        set(&mut p.e2.fixed_ms, &self.fixed_ms);
        set(&mut p.e2.adaptive_max_ms, &self.adaptive_max_ms);
        set_count(&mut p.e2.seeds, "seeds", self.seeds)?;
        set_count(&mut p.e2.phases, "phases", self.phases)?;
        set(&mut p.e3.fractions, &self.fractions);
        set_count(&mut p.e3.max_attempts, "max-attempts", self.max_attempts)?;
        set(&mut p.e4.max_backoff_ms, &self.max_backoff_ms);
        set(&mut p.e4.orphan_window_s, &self.orphan_window_s);
        set(&mut p.e4.task_duration_s, &self.task_duration_s);
        set(&mut p.e4.sweep_interval_s, &self.sweep_interval_s);
        set(&mut p.e4.seed, &self.seed);
        p.validate()?;
        Ok(p)
    }
}

/// A progress bar on stderr, drawn only on a terminal and only once a run
/// has taken more than a moment (the whole study normally takes less).
struct Bar {
    bar: ProgressBar,
    started: Instant,
    terminal: bool,
    shown: AtomicBool,
}

/// How long a run may take before a bar appears.
const A_MOMENT: Duration = Duration::from_millis(300);

impl Bar {
    fn new() -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{msg:28} [{bar:40}] {pos}/{len}") {
            bar.set_style(style.progress_chars("=> "));
        }
        Bar { bar, started: Instant::now(), terminal: std::io::stderr().is_terminal(), shown: AtomicBool::new(false) }
    }

    fn maybe_show(&self) {
        if self.terminal && self.started.elapsed() > A_MOMENT && !self.shown.swap(true, Ordering::Relaxed) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

impl Progress for Bar {
    fn stage(&self, label: &str, total: u64) {
        self.bar.set_message(label.to_owned());
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.maybe_show();
    }

    fn advance(&self, n: u64) {
        self.bar.inc(n);
        self.maybe_show();
    }
}

/// Runs `mcp-tasks study`.
pub(crate) async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let which: Experiment = args.experiment.parse()?;
    let params = args.params()?;
    let bar = Bar::new();
    let report = mcp_tasks_study::report::run(which, &params, &bar).await;
    bar.bar.finish_and_clear();
    let report = report?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json()).context("encoding the results as JSON")?);
    } else {
        print!("{}", report.text());
    }
    if let Some(dir) = &args.plot {
        for path in mcp_tasks_study::plot::write_all(report.figures(), dir)? {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
