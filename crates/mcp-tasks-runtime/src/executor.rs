//! The executor: claims due tasks, leases them, runs their handlers, renews
//! the lease at a third of its length and writes each attempt's outcome as a
//! change guarded on (lease holder, attempt, live) — so a late completion of
//! a task that was cancelled, timed out or taken over changes nothing. Each
//! claim writes a lease holder of its own (`{executor id}/{claim number}`),
//! so a handler whose lease lapsed loses its writes even when this same
//! runtime claimed the task again as the same attempt. [`Executor`] holds
//! only what it uses; its claim loop is [`Executor::spawn`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_tasks_core::{Clock, FailureClass, Lease, RandomSource, RetentionPolicy, TaskId, TaskRecord, Timestamp};
use mcp_tasks_store::{AttemptEnd, AttemptOutcome, Change, ClaimParams, Guard, GuardedUpdate, TaskStore, UpdateOutcome};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::cas;
use crate::claim_backoff::ClaimBackoff;
use crate::context::{HandlerEnv, TaskContext};
use crate::error::RuntimeError;
use crate::lease::LeaseKeeper;
use crate::maintenance::{self, Schedule};
use crate::metrics::{Metrics, Outcome, retry_class};
use crate::registry::Tools;
use crate::running::{Running, RunningHandler, StopReason, lock};
use crate::tool::ToolFailure;
use crate::transitions::{self, CANCELLED_BY_CLIENT, OutcomeRules, Settlement};
use crate::wakeups::Wakeups;

/// The executor's settings.
#[derive(Debug, Clone)]
pub(crate) struct ExecutorConfig {
    /// Most handlers executing at once.
    pub(crate) concurrency: usize,
    /// Most handlers waiting for input besides the executing ones.
    pub(crate) max_waiting: usize,
    /// This executor's id, unique per runtime; each of its claims holds its
    /// leases as `{owner}/{claim number}`.
    pub(crate) owner: String,
    /// When the claim loop runs: at once, on the claim interval, and when
    /// woken (a local create, a freed slot, a retry).
    pub(crate) schedule: Schedule,
    /// Whether a creation may hand its task straight to this executor
    /// ([`Dispatch`]) once the claim loop runs.
    pub(crate) dispatch_at_creation: bool,
}

/// The executor and what it uses.
pub(crate) struct Executor {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) tools: Arc<Tools>,
    pub(crate) running: Arc<Running>,
    pub(crate) wakeups: Arc<Wakeups>,
    /// What each handler's context reaches (its slots are the executor's).
    pub(crate) env: Arc<HandlerEnv>,
    pub(crate) lease: LeaseKeeper,
    /// What decides each attempt's outcome.
    pub(crate) outcomes: OutcomeRules,
    /// The retry jitter's source.
    pub(crate) rng: Mutex<Box<dyn RandomSource>>,
    /// Where attempts' outcomes are counted.
    pub(crate) metrics: Metrics,
    pub(crate) config: ExecutorConfig,
    /// Numbers this runtime's claims.
    pub(crate) claims: AtomicU64,
    /// Serialises claims so concurrent `run_due_once` calls respect `concurrency`.
    pub(crate) claim_lock: tokio::sync::Mutex<()>,
    /// Handlers promised but not yet in `running`, by claims in flight and
    /// by creations dispatched to this executor: counted against the
    /// `concurrency + max_waiting` bound alongside `running`.
    pub(crate) reserved: Mutex<usize>,
    /// Held while a dispatched task's handler is registered, and taken once
    /// by shutdown after `stopping`: no dispatched handler starts after it.
    pub(crate) starting_dispatched: Mutex<()>,
    /// Cancelled at shutdown: no more claims.
    pub(crate) stopping: CancellationToken,
    /// Set when the claim loop starts, if `dispatch_at_creation`: a runtime
    /// whose executor is driven by hand (or not at all) never dispatches.
    pub(crate) dispatching: AtomicBool,
    /// Whether the last claim filled every slot it took (or none has run):
    /// a backlog may wait, and the next claim takes every free slot.
    pub(crate) last_claim_full: AtomicBool,
}

impl Executor {
    /// Runs the claim loop until `stop`. While claims fail (the store is
    /// unreachable) the pass itself waits out a growing pause on top of the
    /// claim interval ([`ClaimBackoff`]), logging the outage once.
    pub(crate) fn spawn(self: &Arc<Self>, stop: CancellationToken) -> JoinHandle<()> {
        let executor = self.clone();
        let backoff = Arc::new(std::sync::Mutex::new(ClaimBackoff::default()));
        let interval = self.config.schedule.period;
        let pass_stop = stop.clone();
        // Until the first claim has looked, queued work may be waiting.
        self.wakeups.claim_left_some();
        self.dispatching.store(self.config.dispatch_at_creation, Ordering::SeqCst);
        maintenance::spawn_pass("executor claim", self.config.schedule.clone(), stop, move || {
            let (executor, backoff, stop) = (executor.clone(), backoff.clone(), pass_stop.clone());
            async move {
                let extra = match executor.run_due_once().await {
                    Ok(_) => {
                        backoff.lock().unwrap_or_else(|p| p.into_inner()).succeeded();
                        return Ok(());
                    }
                    Err(e) => {
                        backoff.lock().unwrap_or_else(|p| p.into_inner()).failed(&e, interval).saturating_sub(interval)
                    }
                };
                tokio::select! {
                    _ = stop.cancelled() => {}
                    _ = tokio::time::sleep(extra) => {}
                }
                Ok(())
            }
        })
    }

    /// A lease holder name for a new claim, never used before by anyone.
    fn next_holder(&self) -> String {
        format!("{}/{}", self.config.owner, self.claims.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// Waits for an in-flight claim to finish; with `stopping` cancelled,
    /// no handler starts after this returns.
    pub(crate) async fn wait_for_claims(&self) {
        drop(self.claim_lock.lock().await);
        drop(lock(&self.starting_dispatched));
    }

    /// Reserves room for up to `wanted` more handlers under the
    /// `concurrency + max_waiting` bound (handlers waiting for input hold no
    /// slot, but each holds memory); the room goes back as the guard drops,
    /// by which time the handlers it stood for are in `running`.
    fn reserve(self: &Arc<Self>, wanted: usize) -> Reservation {
        let bound = self.config.concurrency + self.config.max_waiting;
        let mut reserved = lock(&self.reserved);
        let room = bound.saturating_sub(self.running.len() + *reserved).min(wanted);
        *reserved += room;
        Reservation { executor: self.clone(), room }
    }

    /// Takes a slot for a task of one of this executor's tools about to be
    /// created at `now`, to run it at once without a claim (see
    /// [`Dispatch`]): only while no due work is known to wait, so a new task
    /// never overtakes a queued one this executor knows of, and only with a
    /// slot free.
    pub(crate) fn try_dispatch(self: &Arc<Self>, now: Timestamp) -> Option<Dispatch> {
        if !self.dispatching.load(Ordering::SeqCst) || self.stopping.is_cancelled() || !self.wakeups.queue_drained() {
            return None;
        }
        let reservation = self.reserve(1);
        if reservation.room == 0 {
            return None;
        }
        let slot = self.env.slots.clone().try_acquire_owned().ok()?;
        let holder = self.next_holder();
        let lease = self.lease.lease(&holder, now);
        Some(Dispatch { holder, lease, slot, _reservation: reservation })
    }

    /// Runs a task created with `dispatch`'s lease: its handler starts here
    /// as if claimed. Once shutdown has begun it is handed back instead
    /// (attempt unspent), as shutdown hands back every running handler.
    pub(crate) async fn start_dispatched(self: &Arc<Self>, record: TaskRecord, dispatch: Dispatch) {
        let Dispatch { holder, slot, _reservation, .. } = dispatch;
        {
            let _starting = lock(&self.starting_dispatched);
            if !self.stopping.is_cancelled() {
                self.metrics.attempts_started(1, true);
                self.spawn_handler(record, holder, Some(slot));
                return;
            }
        }
        drop(slot);
        let handler = RunningHandler::new(holder, record.attempt, record.max_attempts, self.clock.now(), None);
        self.release_at_shutdown(&record.id, &handler).await;
    }

    /// Claims up to the free executor slots (and no more than the waiting
    /// bound leaves room for) and spawns a handler for each, holding its slot.
    pub(crate) async fn run_due_once(self: &Arc<Self>) -> Result<usize, RuntimeError> {
        let _claiming = self.claim_lock.lock().await;
        if self.stopping.is_cancelled() || self.tools.is_empty() {
            return Ok(0);
        }
        // Reserves only what it may fill: a creation meanwhile can still be
        // dispatched to the slots and room it leaves.
        let free = self.env.slots.available_permits();
        let wanted = self.claim_share(free);
        let reservation = self.reserve(wanted);
        let mut slots = Vec::new();
        while slots.len() < reservation.room {
            // Never takes a permit a handler coming back from a wait is queued for.
            match self.env.slots.clone().try_acquire_owned() {
                Ok(permit) => slots.push(permit),
                Err(_) => break,
            }
        }
        if slots.is_empty() {
            return Ok(0);
        }
        let now = self.clock.now();
        let holder = self.next_holder();
        let limit = slots.len();
        self.wakeups.claim_started();
        let claimed = self
            .store
            .claim(ClaimParams {
                owner: holder.clone(),
                now,
                lease_expires_at: self.lease.lease(&holder, now).expires_at,
                limit,
                tools: Some(self.tools.names()),
            })
            .await
            .inspect_err(|_| self.wakeups.claim_left_some())?;
        let n = claimed.len();
        self.last_claim_full.store(n == limit, Ordering::SeqCst);
        if n == limit {
            self.wakeups.claim_left_some();
            if limit == reservation.room && wanted < free {
                // It left slots to dispatch and found a backlog: the next
                // claim, at once, takes them all.
                self.wakeups.executor.notify_one();
            }
        }
        self.metrics.attempts_started(n, false);
        for record in claimed {
            let slot = slots.pop();
            self.spawn_handler(record, holder.clone(), slot);
        }
        // Slots left over go back as `slots` drops.
        Ok(n)
    }

    /// How many of `free` slots a claim takes. A claim holds every
    /// slot it may fill until the store answers, so a creation arriving
    /// meanwhile would find none to be dispatched to, be queued, and wake
    /// another claim. With no backlog known (the last claim came back
    /// short) and dispatch on, a claim leaves a quarter of the slots free;
    /// after a full claim it takes them all.
    fn claim_share(&self, free: usize) -> usize {
        if self.dispatching.load(Ordering::SeqCst) && !self.last_claim_full.load(Ordering::SeqCst) {
            free - free / 4
        } else {
            free
        }
    }

    fn spawn_handler(self: &Arc<Self>, record: TaskRecord, holder: String, slot: Option<OwnedSemaphorePermit>) {
        let started_at = self.clock.now();
        let handler = Arc::new(RunningHandler::new(holder, record.attempt, record.max_attempts, started_at, slot));
        self.running.insert(record.id.clone(), handler.clone());
        let deregister = Deregister { executor: self.clone(), id: record.id.clone(), handler: handler.clone() };
        // Each attempt runs in a span of the task's stored trace (trace_context.rs).
        let span = crate::trace_context::attempt_span(&record, &handler.holder);
        let driver = tokio::spawn(self.clone().drive(record, handler.clone(), deregister).instrument(span));
        handler.set_abort(driver.abort_handle());
    }
}

/// Room for handlers under the executor's bound, held until they are registered.
struct Reservation {
    executor: Arc<Executor>,
    room: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        *lock(&self.executor.reserved) -= self.room;
    }
}

/// A task about to be created already leased to this executor, with the
/// slot it will run in: the insert writes the lease, so the task never
/// waits for a claim, and the claim's statement and its read back are
/// saved. Dropped unused (the creation failed, or joined an existing task),
/// it gives the slot and the room back; the lease it names was never written.
pub(crate) struct Dispatch {
    holder: String,
    /// The lease the creation writes.
    pub(crate) lease: Lease,
    slot: OwnedSemaphorePermit,
    _reservation: Reservation,
}

impl Dispatch {
    /// Whether `record` was created holding this dispatch's lease.
    pub(crate) fn holds(&self, record: &TaskRecord) -> bool {
        record.lease.as_ref().is_some_and(|l| l.owner == self.holder)
    }
}

/// Removes a handler from the registry however its task ends (even aborted).
struct Deregister {
    executor: Arc<Executor>,
    id: TaskId,
    handler: Arc<RunningHandler>,
}

impl Drop for Deregister {
    fn drop(&mut self) {
        // Normally `drive` gave the slot back already; not when aborted.
        self.handler.release_slot();
        self.executor.running.remove(&self.id, &self.handler);
        // Leaving `running` makes room under the waiting bound even when
        // the slot went back earlier: a claim that found no room then must
        // be woken now, or due work waits for the claim interval.
        self.executor.wakeups.slot_freed();
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

impl Executor {
    /// Runs one attempt to its end and writes the outcome. The tool runs in
    /// a task of its own, not inline in this driver: a tool that blocks its
    /// thread (synchronous work before its first `.await`) must not stop
    /// this driver renewing the lease from another worker.
    async fn drive(self: Arc<Self>, mut record: TaskRecord, handler: Arc<RunningHandler>, _deregister: Deregister) {
        let Some(registered) = self.tools.get(&record.tool) else {
            // Claims are filtered by our tools; this cannot happen, but never panic.
            tracing::error!(task = %record.id, tool = %record.tool, "claimed a task for a tool this runtime lacks");
            return;
        };
        let ctx = TaskContext::new(self.env.clone(), &mut record, handler.clone());
        let tool = registered.tool.clone();
        let mut run = AbortOnDrop(tokio::spawn(async move { tool.run(ctx).await }.in_current_span()));
        let renew_every = self.lease.renew_every();
        let mut renewing = true;
        // When the lease we hold runs out, by the clock every instance judges it on.
        let mut lease_until = record.lease.as_ref().map_or_else(|| self.clock.now(), |l| l.expires_at);
        let outcome: Result<Value, ToolFailure> = loop {
            tokio::select! {
                joined = &mut run.0 => break joined.unwrap_or_else(|e| {
                    let why = if e.is_panic() { "the tool panicked" } else { "the tool's task was aborted" };
                    Err(ToolFailure::permanent(format!("{why} on attempt {}", record.attempt)))
                }),
                _ = tokio::time::sleep(renew_every), if renewing => {
                    renewing = self.lease.renew(&record.id, &handler, &mut lease_until).await;
                }
            }
        };
        // The handler is done executing: its slot goes to the next claim now,
        // which then rides the same group commit as this outcome's write.
        if handler.release_slot() {
            self.wakeups.slot_freed();
        }
        self.settle(&record, &handler, outcome).await;
    }

    /// Writes the attempt's outcome, guarded on our lease and attempt.
    async fn settle(&self, record: &TaskRecord, handler: &RunningHandler, outcome: Result<Value, ToolFailure>) {
        let id = &record.id;
        let now = self.clock.now();
        let own =
            Guard { lease_owner: Some(handler.holder.clone()), attempt: Some(record.attempt), ..Guard::id(id.clone()) };
        let cancel = || {
            GuardedUpdate::change(
                Guard { cancel_requested: Some(true), ..own.clone() },
                cancelled_by_client(now, &self.outcomes.retention, handler),
            )
        };
        let update = match handler.reason() {
            Some(StopReason::LeaseLost) => {
                tracing::info!(task = %id, "handler returned after losing its lease; its outcome is discarded");
                return;
            }
            Some(StopReason::Shutdown) => {
                self.release_at_shutdown(id, handler).await;
                return;
            }
            // Cancellation acknowledged to the client wins over whatever the
            // handler returned, so "cancel acked ⇒ cancelled" unless already terminal.
            Some(StopReason::CancelRequested) => cancel(),
            None => {
                let (settlement, mut change) = {
                    let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
                    transitions::settle(outcome, record.attempt, record.max_attempts, now, &self.outcomes, rng.as_mut())
                };
                if let Some(end) = &mut change.attempt_end {
                    end.owner = Some(handler.holder.clone());
                    end.started_at = Some(handler.started_at);
                }
                let guarded = GuardedUpdate::change(Guard { cancel_requested: Some(false), ..own.clone() }, change);
                match cas::apply_one_unread(self.store.as_ref(), guarded).await {
                    Ok(UpdateOutcome::Applied(_)) => {
                        log_settlement(record, &settlement);
                        count_settlement(&self.metrics, record, &settlement);
                        if matches!(settlement, Settlement::Retry { .. } | Settlement::Snoozed { .. }) {
                            self.wakeups.work_available();
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
        match cas::apply_one_unread(self.store.as_ref(), update).await {
            Ok(UpdateOutcome::Applied(_)) => {
                tracing::info!(task = %id, tool = %record.tool, attempt = record.attempt, "cancelled: the handler stopped as the client asked");
                self.metrics.finished(&record.tool, Outcome::Cancelled);
            }
            Ok(_) => {
                tracing::info!(task = %id, "outcome not written: the task changed meanwhile (cancelled, timed out or taken over)")
            }
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "cannot write the attempt's outcome; the lease will lapse and triage will decide")
            }
        }
    }

    /// Hands back the lease of a handler stopped at shutdown, attempt unspent
    /// (or, if the client asked to cancel meanwhile, ends it `cancelled`: an
    /// unleased cancel-requested task would never be claimed again).
    pub(crate) async fn release_at_shutdown(&self, id: &TaskId, handler: &RunningHandler) {
        let now = self.clock.now();
        let own =
            Guard { lease_owner: Some(handler.holder.clone()), attempt: Some(handler.attempt), ..Guard::id(id.clone()) };
        let release = GuardedUpdate::change(
            Guard { cancel_requested: Some(false), ..own.clone() },
            transitions::released_at_shutdown(now, handler.attempt, handler.max_attempts),
        );
        let cancel = GuardedUpdate::change(
            Guard { cancel_requested: Some(true), ..own },
            cancelled_by_client(now, &self.outcomes.retention, handler),
        );
        // One of the two guards holds if we still own the task; neither if not.
        match self.store.apply_unread(vec![release, cancel]).await {
            Ok(outcomes) => tracing::info!(
                task = %id,
                released = outcomes.first().is_some_and(UpdateOutcome::applied),
                cancelled = outcomes.get(1).is_some_and(UpdateOutcome::applied),
                "handed back at shutdown"
            ),
            Err(e) => tracing::warn!(task = %id, error = %e, "cannot hand back the lease at shutdown; it will lapse"),
        }
    }
}

/// The change that ends a handler's task `cancelled` as its client asked,
/// ending the handler's attempt with it.
fn cancelled_by_client(now: Timestamp, retention: &RetentionPolicy, handler: &RunningHandler) -> Change {
    let end = AttemptEnd {
        attempt: handler.attempt,
        started_at: Some(handler.started_at),
        owner: Some(handler.holder.clone()),
        outcome: AttemptOutcome::Cancelled,
        class: None,
        error: None,
        message: Some(CANCELLED_BY_CLIENT.to_owned()),
    };
    transitions::ending(transitions::cancelled(now, retention, CANCELLED_BY_CLIENT), end)
}

/// Counts what an attempt's settlement did.
fn count_settlement(metrics: &Metrics, record: &TaskRecord, settlement: &Settlement) {
    match settlement {
        Settlement::Completed => metrics.finished(&record.tool, Outcome::Completed),
        Settlement::Retry { .. } => metrics.retried(&record.tool, retry_class(FailureClass::Transient)),
        Settlement::Snoozed { .. } => {}
        Settlement::Failed { class: Some(FailureClass::Poison) } => metrics.finished(&record.tool, Outcome::DeadLettered),
        Settlement::Failed { .. } => metrics.finished(&record.tool, Outcome::Failed),
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
            class = "transient",
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
