//! What a benchmark run measures and how long: the full run the issue
//! asks for, or `--quick`, with the flags' overrides.

use std::time::Duration;

use anyhow::bail;
use clap::ValueEnum;

use super::launcher::Server;

/// A part of the run `--only` can select: each is one group of rows of the
/// table, measured on both servers where the peer has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Part {
    /// `tasks/get` with one task stored, at each client count.
    Polls,
    /// Durable creations at each client count.
    Creations,
    /// `tasks/get` at each of `--sizes` stored tasks.
    StoredPolls,
    /// Trivial tasks end to end.
    EndToEnd,
    /// The server's resident memory with live tasks stored (ours only).
    Memory,
    /// SQLite's raw one-row fsync'd commit rate on the same disk.
    RawCommits,
    /// One reaper pass at each of `--sweep-sizes` rows.
    Sweeps,
    /// Triage of lapsed leases.
    Triage,
}

/// The sizes, client counts and durations of one run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// Concurrent clients of the creation measurements.
    pub(crate) creation_clients: Vec<usize>,
    /// Concurrent clients of the `tasks/get` measurements with one task stored.
    pub(crate) poll_clients: Vec<usize>,
    /// Stored tasks at which `tasks/get` is measured on `mcp-tasks`.
    pub(crate) sizes: Vec<u64>,
    /// The same for the peer, whose every call sweeps its whole map.
    pub(crate) peer_sizes: Vec<u64>,
    pub(crate) seconds: Duration,
    pub(crate) warm_up: Duration,
    pub(crate) runs: usize,
    /// Clients filling a store, and running the end-to-end tasks.
    pub(crate) fill_clients: usize,
    pub(crate) e2e_tasks: u64,
    /// Live tasks stored when resident memory is read.
    pub(crate) resident_live: u64,
    /// Rows in the store of each reaper measurement.
    pub(crate) sweep_sizes: Vec<u64>,
    /// Lapsed leases triaged.
    pub(crate) lapsed_leases: u64,
    /// The parts measured (`--only`; every part when it is not given).
    pub(crate) parts: Vec<Part>,
}

/// The peer's largest store: each of its calls sweeps every task it holds,
/// so storing N tasks costs N²/2 entry visits (≈ 1 minute at 100 k).
const PEER_MAX_SIZE: u64 = 10_000;

impl Plan {
    /// The plan for `quick` or a full run, with the flags' overrides.
    pub(crate) fn from_args(
        quick: bool,
        runs: Option<usize>,
        seconds: Option<f64>,
        sizes: &[u64],
        sweep_sizes: &[u64],
        only: &[Part],
    ) -> anyhow::Result<Plan> {
        let mut plan = if quick {
            Plan {
                creation_clients: vec![1, 16, 64],
                poll_clients: vec![1, 32, 64],
                sizes: vec![1_000],
                peer_sizes: vec![1_000],
                seconds: Duration::from_secs(1),
                warm_up: Duration::from_millis(200),
                runs: 1,
                fill_clients: 64,
                e2e_tasks: 300,
                resident_live: 1_000,
                sweep_sizes: vec![1_000, 10_000],
                lapsed_leases: 1_000,
                parts: Part::value_variants().to_vec(),
            }
        } else {
            Plan {
                creation_clients: vec![1, 16, 64],
                poll_clients: vec![1, 32, 64],
                sizes: vec![10_000, 100_000, 1_000_000],
                peer_sizes: vec![10_000],
                seconds: Duration::from_secs(10),
                warm_up: Duration::from_secs(1),
                runs: 3,
                fill_clients: 64,
                e2e_tasks: 20_000,
                resident_live: 100_000,
                sweep_sizes: vec![10_000, 100_000, 1_000_000],
                lapsed_leases: 10_000,
                parts: Part::value_variants().to_vec(),
            }
        };
        if let Some(runs) = runs {
            if runs == 0 {
                bail!("--runs must be at least 1");
            }
            plan.runs = runs;
        }
        if let Some(seconds) = seconds {
            if !(seconds.is_finite() && seconds > 0.0) {
                bail!("--seconds must be a positive number of seconds, not {seconds}");
            }
            plan.seconds = Duration::from_secs_f64(seconds);
        }
        if !sizes.is_empty() {
            if let Some(bad) = sizes.iter().find(|&&n| n < 2) {
                bail!("--sizes: {bad} is too few stored tasks (the one-task figure is always measured)");
            }
            plan.sizes = sizes.to_vec();
            plan.peer_sizes = sizes.iter().copied().filter(|&n| n <= PEER_MAX_SIZE).collect();
        }
        if !sweep_sizes.is_empty() {
            if let Some(bad) = sweep_sizes.iter().find(|&&n| n <= super::sweeps::DUE) {
                bail!("--sweep-sizes: {bad} rows do not hold the {} due ones", super::sweeps::DUE);
            }
            plan.sweep_sizes = sweep_sizes.to_vec();
        }
        if !only.is_empty() {
            plan.parts = only.to_vec();
        }
        Ok(plan)
    }

    /// Whether `part` is measured in this run.
    pub(crate) fn includes(&self, part: Part) -> bool {
        self.parts.contains(&part)
    }

    /// The stored sizes measured on `server`.
    pub(crate) fn sizes(&self, server: Server) -> &[u64] {
        match server {
            Server::McpTasks => &self.sizes,
            Server::RmcpPeer => &self.peer_sizes,
        }
    }

    /// The progress bar's steps: one per timed run, fill, or reading of the
    /// parts measured.
    pub(crate) fn steps(&self) -> u64 {
        let runs = self.runs as u64;
        let counted = |part: Part, steps: u64| if self.includes(part) { steps } else { 0 };
        let per_server = |sizes: &[u64]| {
            counted(Part::Polls, self.poll_clients.len() as u64 * runs)
                + counted(Part::Creations, self.creation_clients.len() as u64 * runs)
                + counted(Part::StoredPolls, sizes.len() as u64 * (1 + 3 * runs))
                + counted(Part::EndToEnd, runs)
        };
        per_server(&self.sizes)
            + counted(Part::Memory, 1)
            + per_server(&self.peer_sizes)
            + counted(Part::RawCommits, runs)
            + counted(Part::Sweeps, self.sweep_sizes.len() as u64)
            + counted(Part::Triage, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_plan_and_bad_values_are_named() {
        let plan = Plan::from_args(false, Some(1), Some(2.5), &[5_000, 200_000], &[500], &[]).unwrap();
        assert_eq!(plan.sweep_sizes, [500]);
        assert_eq!((plan.runs, plan.seconds), (1, Duration::from_millis(2500)));
        assert_eq!((plan.sizes(Server::McpTasks), plan.sizes(Server::RmcpPeer)), (&[5_000, 200_000][..], &[5_000][..]));
        assert!(Plan::from_args(true, Some(0), None, &[], &[], &[]).unwrap_err().to_string().contains("--runs"));
        assert!(Plan::from_args(true, None, Some(-1.0), &[], &[], &[]).unwrap_err().to_string().contains("--seconds"));
        assert!(Plan::from_args(true, None, None, &[1], &[], &[]).unwrap_err().to_string().contains("--sizes"));
        assert!(Plan::from_args(true, None, None, &[], &[100], &[]).unwrap_err().to_string().contains("--sweep-sizes"));
    }

    #[test]
    fn the_steps_count_every_run_fill_and_reading() {
        let quick = Plan::from_args(true, None, None, &[], &[], &[]).unwrap();
        // Per server: 6 timed loads, 1 fill + 1 load beside 1 load of one
        // task and 1 of the same mix, 1 end-to-end; ours reads its memory;
        // then 1 raw commit run, 2 sweeps and a triage.
        assert_eq!(quick.steps(), (6 + 4 + 1) + 1 + (6 + 4 + 1) + 1 + 2 + 1);
    }

    #[test]
    fn only_measures_the_parts_it_names() {
        let plan = Plan::from_args(true, None, None, &[], &[], &[Part::EndToEnd, Part::Sweeps]).unwrap();
        assert!(plan.includes(Part::EndToEnd) && plan.includes(Part::Sweeps));
        assert!(!plan.includes(Part::Polls) && !plan.includes(Part::Memory));
        // One end-to-end run per server, then two sweeps.
        assert_eq!(plan.steps(), 1 + 1 + 2);
        let all = Plan::from_args(true, None, None, &[], &[], &[]).unwrap();
        assert_eq!(all.parts, Part::value_variants());
    }
}
