//! The executor: claims due tasks, leases them, runs their handlers, renews
//! the lease at a third of its length and writes each attempt's outcome as a
//! change guarded on (lease holder, attempt, live) — so a late completion of
//! a task that was cancelled, timed out or taken over changes nothing. Each
//! claim writes a lease holder of its own (`{executor id}/{claim number}`),
//! so a handler whose lease lapsed loses its writes even when this same
//! runtime claimed the task again as the same attempt.

use std::sync::Arc;

use mcp_tasks_core::{FailureClass, Lease, TaskId, TaskRecord, Timestamp};
use mcp_tasks_store::{ClaimParams, Change, Guard, GuardedUpdate, UpdateOutcome};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

use crate::context::TaskContext;
use crate::error::RuntimeError;
use crate::running::{RunningHandler, StopReason};
use crate::shared::Shared;
use crate::tool::ToolFailure;
use crate::transitions::{self, CANCELLED_BY_CLIENT, Settlement};

/// Claims up to the free executor slots (and no more than the waiting bound
/// leaves room for) and spawns a handler for each, holding its slot.
pub(crate) async fn run_due_once(shared: &Arc<Shared>) -> Result<usize, RuntimeError> {
    let _claiming = shared.claim_lock.lock().await;
    if shared.is_stopping() || shared.tools.is_empty() {
        return Ok(0);
    }
    // Handlers waiting for input hold no slot, but each holds memory.
    let room = (shared.concurrency + shared.max_waiting).saturating_sub(shared.running.len());
    let mut slots = Vec::new();
    while slots.len() < room {
        // Never takes a permit a handler coming back from a wait is queued for.
        match shared.slots.clone().try_acquire_owned() {
            Ok(permit) => slots.push(permit),
            Err(_) => break,
        }
    }
    if slots.is_empty() {
        return Ok(0);
    }
    let now = shared.now();
    let holder = shared.next_holder();
    let claimed = shared
        .store
        .claim(ClaimParams {
            owner: holder.clone(),
            now,
            lease_expires_at: now.plus(shared.policy.lease_duration),
            limit: slots.len(),
            tools: Some(shared.tool_names()),
        })
        .await?;
    let n = claimed.len();
    for record in claimed {
        let slot = slots.pop();
        spawn_handler(shared, record, holder.clone(), slot);
    }
    // Slots left over go back as `slots` drops.
    Ok(n)
}

/// Removes a handler from the registry however its task ends (even aborted).
struct Deregister {
    shared: Arc<Shared>,
    id: TaskId,
    handler: Arc<RunningHandler>,
}

impl Drop for Deregister {
    fn drop(&mut self) {
        self.handler.release_slot();
        self.shared.running.remove(&self.id, &self.handler);
        self.shared.wakeups.work_available();
    }
}

/// Aborts a spawned task when dropped (the tool's own task, when its driver
/// is aborted at shutdown).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn spawn_handler(shared: &Arc<Shared>, record: TaskRecord, holder: String, slot: Option<OwnedSemaphorePermit>) {
    let handler = Arc::new(RunningHandler::new(holder, record.attempt, record.max_attempts, slot));
    shared.running.insert(record.id.clone(), handler.clone());
    let deregister = Deregister { shared: shared.clone(), id: record.id.clone(), handler: handler.clone() };
    let driver = tokio::spawn(drive(shared.clone(), record, handler.clone(), deregister));
    handler.set_abort(driver.abort_handle());
}

/// Runs one attempt to its end and writes the outcome.
async fn drive(shared: Arc<Shared>, record: TaskRecord, handler: Arc<RunningHandler>, _deregister: Deregister) {
    let Some(registered) = shared.tools.get(&record.tool) else {
        // Claims are filtered by our tools; this cannot happen, but never panic.
        tracing::error!(task = %record.id, tool = %record.tool, "claimed a task for a tool this runtime lacks");
        return;
    };
    let ctx = TaskContext::new(shared.clone(), &record, handler.clone());
    let tool = registered.tool.clone();
    let mut run = AbortOnDrop(tokio::spawn(async move { tool.run(ctx).await }));
    let renew_every = shared.policy.lease_duration / 3;
    let mut renewing = true;
    // When the lease we hold runs out, by the clock every instance judges it on.
    let mut lease_until = record.lease.as_ref().map_or_else(|| shared.now(), |l| l.expires_at);
    let outcome: Result<Value, ToolFailure> = loop {
        tokio::select! {
            joined = &mut run.0 => break joined.unwrap_or_else(|e| {
                let why = if e.is_panic() { "the tool panicked" } else { "the tool's task was aborted" };
                Err(ToolFailure::permanent(format!("{why} on attempt {}", record.attempt)))
            }),
            _ = tokio::time::sleep(renew_every), if renewing => {
                renewing = renew(&shared, &record, &handler, &mut lease_until).await;
            }
        }
    };
    settle(&shared, &record, &handler, outcome).await;
}

/// Extends the lease; returns whether to keep renewing. A lost renewal means
/// someone else owns the task now: the handler is told to stop. So does a
/// lease that lapsed while the store could not be reached (self-fencing):
/// another instance may take the task over from then on, and this
/// handler's writes would be refused anyway.
async fn renew(shared: &Shared, record: &TaskRecord, handler: &RunningHandler, lease_until: &mut Timestamp) -> bool {
    let now = shared.now();
    let expires_at = now.plus(shared.policy.lease_duration);
    let lease = Lease { owner: handler.holder.clone(), expires_at };
    let guard = Guard {
        lease_owner: Some(handler.holder.clone()),
        attempt: Some(record.attempt),
        ..Guard::id(record.id.clone())
    };
    let change = Change { now, lease: Some(Some(lease)), ..Change::default() };
    match shared.apply_one(GuardedUpdate::change(guard, change)).await {
        Ok(UpdateOutcome::Applied(Some(row))) => {
            *lease_until = expires_at;
            if row.cancel_requested {
                // A cancel acknowledged by another instance.
                handler.stop(StopReason::CancelRequested);
            }
            true
        }
        Ok(_) => {
            tracing::info!(task = %record.id, attempt = record.attempt, "lease renewal lost: the task was taken over or ended");
            handler.stop(StopReason::LeaseLost);
            false
        }
        Err(e) if now >= *lease_until => {
            tracing::warn!(
                task = %record.id,
                error = %e,
                "lease lapsed while the store was unavailable: stopping the handler (another instance may take the task over)"
            );
            handler.stop(StopReason::LeaseLost);
            false
        }
        Err(e) => {
            // Keep the handler: the next renewal may get through before the lease lapses.
            tracing::warn!(task = %record.id, error = %e, "lease renewal failed");
            true
        }
    }
}

/// Writes the attempt's outcome, guarded on our lease and attempt.
async fn settle(shared: &Shared, record: &TaskRecord, handler: &RunningHandler, outcome: Result<Value, ToolFailure>) {
    let id = &record.id;
    let now = shared.now();
    let own = Guard {
        lease_owner: Some(handler.holder.clone()),
        attempt: Some(record.attempt),
        ..Guard::id(id.clone())
    };
    let cancel = || {
        GuardedUpdate::change(
            Guard { cancel_requested: Some(true), ..own.clone() },
            transitions::cancelled(now, &shared.policy.retention, CANCELLED_BY_CLIENT),
        )
    };
    let update = match handler.reason() {
        Some(StopReason::LeaseLost) => {
            tracing::info!(task = %id, "handler returned after losing its lease; its outcome is discarded");
            return;
        }
        Some(StopReason::Shutdown) => {
            release_at_shutdown(shared, id, handler).await;
            return;
        }
        // Cancellation acknowledged to the client wins over whatever the
        // handler returned, so "cancel acked ⇒ cancelled" unless already terminal.
        Some(StopReason::CancelRequested) => cancel(),
        None => {
            let (settlement, change) = {
                let mut rng = shared.next_random();
                transitions::settle(
                    outcome,
                    record.attempt,
                    record.max_attempts,
                    now,
                    &shared.policy,
                    &shared.classifier,
                    rng.as_mut(),
                )
            };
            let guarded = GuardedUpdate::change(Guard { cancel_requested: Some(false), ..own.clone() }, change);
            match shared.apply_one(guarded).await {
                Ok(UpdateOutcome::Applied(_)) => {
                    log_settlement(record, &settlement);
                    if matches!(settlement, Settlement::Retry { .. } | Settlement::Snoozed { .. }) {
                        shared.wakeups.work_available();
                    }
                    return;
                }
                // Perhaps a cancel arrived after the last renewal: honour it.
                Ok(_) => cancel(),
                Err(e) => {
                    tracing::warn!(task = %id, error = %e, "cannot write the attempt's outcome; the lease will lapse and triage will decide");
                    return;
                }
            }
        }
    };
    match shared.apply_one(update).await {
        Ok(UpdateOutcome::Applied(_)) => {}
        Ok(_) => tracing::info!(task = %id, "outcome not written: the task changed meanwhile (cancelled, timed out or taken over)"),
        Err(e) => tracing::warn!(task = %id, error = %e, "cannot write the attempt's outcome; the lease will lapse and triage will decide"),
    }
}

/// One line per attempt that did not simply complete: a retry, and above
/// all a dead letter, is what an operator looks for.
fn log_settlement(record: &TaskRecord, settlement: &Settlement) {
    let (task, tool, attempt, max) = (&record.id, &record.tool, record.attempt, record.max_attempts);
    match settlement {
        Settlement::Completed => tracing::debug!(task = %task, tool = %tool, attempt, "completed"),
        Settlement::Retry { attempt: next, delay } => tracing::info!(
            task = %task,
            tool = %tool,
            attempt,
            next_attempt = next,
            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            "retrying after a transient failure: attempt {next} of {max} in {} ms",
            delay.as_millis()
        ),
        Settlement::Snoozed { delay } => tracing::debug!(
            task = %task,
            tool = %tool,
            attempt,
            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            "running again later, as the tool asked"
        ),
        Settlement::Failed { class: Some(FailureClass::Poison) } => tracing::warn!(
            task = %task,
            tool = %tool,
            attempt,
            "dead-lettered: transient failures exhausted all {max} attempts"
        ),
        Settlement::Failed { class } => tracing::info!(
            task = %task,
            tool = %tool,
            attempt,
            class = %class.map_or_else(|| "protocol error".to_owned(), |c| c.to_string()),
            "failed"
        ),
    }
}

/// Hands back the lease of a handler stopped at shutdown, attempt unspent
/// (or, if the client asked to cancel meanwhile, ends it `cancelled`: an
/// unleased cancel-requested task would never be claimed again).
pub(crate) async fn release_at_shutdown(shared: &Shared, id: &TaskId, handler: &RunningHandler) {
    let now = shared.now();
    let own = Guard {
        lease_owner: Some(handler.holder.clone()),
        attempt: Some(handler.attempt),
        ..Guard::id(id.clone())
    };
    let release = GuardedUpdate::change(
        Guard { cancel_requested: Some(false), ..own.clone() },
        transitions::released_at_shutdown(now, handler.attempt, handler.max_attempts),
    );
    let cancel = GuardedUpdate::change(
        Guard { cancel_requested: Some(true), ..own },
        transitions::cancelled(now, &shared.policy.retention, CANCELLED_BY_CLIENT),
    );
    // One of the two guards holds if we still own the task; neither if not.
    match shared.store.apply(vec![release, cancel]).await {
        Ok(outcomes) => tracing::info!(
            task = %id,
            released = outcomes.first().is_some_and(UpdateOutcome::applied),
            cancelled = outcomes.get(1).is_some_and(UpdateOutcome::applied),
            "handed back at shutdown"
        ),
        Err(e) => tracing::warn!(task = %id, error = %e, "cannot hand back the lease at shutdown; it will lapse"),
    }
}
