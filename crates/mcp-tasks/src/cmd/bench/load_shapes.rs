//! The loads the scenarios send, built on the load generator: timed
//! creations, filling a store with a mix of finished and live tasks,
//! timed polls over stored ids, and waiting until tasks are seen completed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::bail;

use super::http_load::{self, Connection, Endpoint, LoadOutcome, Stop};
use super::mcp_requests::{Answer, LIVE_MS, create_task, get_task};

/// A JSON-RPC id per request, unique in this process.
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Durable creations of live tasks by `clients` clients until `stop`; the
/// outcome keeps the created ids when `keep_ids`.
pub(crate) async fn creations(
    endpoint: &Endpoint,
    clients: usize,
    stop: Stop,
    ms: u64,
    keep_ids: bool,
) -> anyhow::Result<LoadOutcome> {
    http_load::run(endpoint, clients, stop, keep_ids, move |_, _| create_task(next_id(), ms)).await
}

/// The task ids in a load's answers.
pub(crate) fn created_ids(load: &LoadOutcome) -> Vec<String> {
    load.answers
        .iter()
        .filter_map(|a| match a {
            Answer::Created { task_id } => Some(task_id.clone()),
            Answer::Status { .. } => None,
        })
        .collect()
}

/// `tasks/get` by `clients` clients until `stop`, spread over `ids` (client
/// `c` starts at its own offset, so they do not all read one row).
pub(crate) async fn polls(
    endpoint: &Endpoint,
    clients: usize,
    stop: Stop,
    ids: Arc<Vec<String>>,
) -> anyhow::Result<LoadOutcome> {
    if ids.is_empty() {
        bail!("no task to poll");
    }
    let stride = (ids.len() / clients.max(1)).max(1);
    http_load::run(endpoint, clients, stop, false, move |client, n| {
        // A multiplicative step visits every id of a client's share in a
        // scattered order: no cache sees the same few rows.
        let index = (client * stride + (n as usize).wrapping_mul(7919)) % ids.len();
        get_task(next_id(), &ids[index])
    })
    .await
}

/// Stores `count` tasks: half finished (created with a tool that returns at
/// once, then seen completed), then half live (a tool working for an hour).
/// Returns every id, finished first.
pub(crate) async fn fill_mixed(endpoint: &Endpoint, clients: usize, count: u64) -> anyhow::Result<Vec<String>> {
    let finished = count / 2;
    let mut ids = Vec::with_capacity(count as usize);
    if finished > 0 {
        let load = creations(endpoint, clients, Stop::Count(finished), 0, true).await?;
        check_filled(&load, finished)?;
        let done = created_ids(&load);
        wait_completed(endpoint, clients, &done).await?;
        ids.extend(done);
    }
    let load = creations(endpoint, clients, Stop::Count(count - finished), LIVE_MS, true).await?;
    check_filled(&load, count - finished)?;
    ids.extend(created_ids(&load));
    Ok(ids)
}

/// A fill that did not store what it was asked to is no base for a measurement.
pub(crate) fn check_filled(load: &LoadOutcome, wanted: u64) -> anyhow::Result<()> {
    if load.errors > 0 || load.answered != wanted {
        bail!(
            "filling the store: {} of {wanted} creations answered, {} failed ({})",
            load.answered,
            load.errors,
            load.first_error.as_deref().unwrap_or("no error")
        );
    }
    Ok(())
}

/// Polls every id until it is seen `completed`; `clients` clients each take
/// a share and poll it in order (each waits 2 ms before asking again about
/// a task not yet completed). Errors if one ends otherwise.
pub(crate) async fn wait_completed(endpoint: &Endpoint, clients: usize, ids: &[String]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let share = ids.len().div_ceil(clients.max(1)).max(1);
    let mut workers = Vec::new();
    for chunk in ids.chunks(share) {
        let chunk = chunk.to_vec();
        let endpoint = endpoint.clone();
        workers.push(tokio::spawn(async move {
            let mut connection = Connection::open(&endpoint).await?;
            for id in chunk {
                loop {
                    match connection.send(get_task(next_id(), &id)).await? {
                        Answer::Status { status } if status == "completed" => break,
                        Answer::Status { status } if status == "working" || status == "input_required" => {
                            tokio::time::sleep(Duration::from_millis(2)).await;
                        }
                        other => bail!("task {id} ended {other:?}, not completed"),
                    }
                }
            }
            anyhow::Ok(())
        }));
    }
    for worker in workers {
        worker.await??;
    }
    Ok(started.elapsed())
}
