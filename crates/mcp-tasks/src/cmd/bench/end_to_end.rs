//! Scenario 3: end-to-end throughput — `clients` clients each create their
//! share of trivial tasks (a tool that returns at once), then poll them until
//! each is seen `completed`; the rate is every task over the whole time.

use std::time::Instant;

use super::http_load::{Endpoint, Stop};
use super::load_shapes::{check_filled, created_ids, creations, wait_completed};
use super::measurement::{Measurement, Scenario};

/// Runs `tasks` trivial tasks through `endpoint` end to end.
pub(crate) async fn end_to_end(
    endpoint: &Endpoint,
    subject: &str,
    clients: usize,
    tasks: u64,
) -> anyhow::Result<Measurement> {
    let started = Instant::now();
    let load = creations(endpoint, clients, Stop::Count(tasks), 0, true).await?;
    check_filled(&load, tasks)?;
    wait_completed(endpoint, clients, &created_ids(&load)).await?;
    let seconds = started.elapsed().as_secs_f64();
    Ok(Measurement {
        scenario: Scenario::EndToEnd,
        subject: subject.to_owned(),
        clients: Some(clients),
        stored: None,
        count: tasks,
        errors: 0,
        first_error: None,
        seconds,
        per_second: tasks as f64 / seconds,
        latency: None,
        bytes: None,
        same_mix: None,
        one_live: None,
        peer: None,
        run_rates: Vec::new(),
        runs: 1,
    })
}
