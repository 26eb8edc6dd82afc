//! [`Runtime`]: the one object a server holds. Client operations (create,
//! get, cancel, answer) read → decide → apply with the version they read,
//! retrying a bounded number of times when they lose a race.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::{Policy, TaskId, TaskRecord};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, NewTask, TaskStore, UpdateOutcome};
use serde_json::Value;

use crate::background;
use crate::builder::RuntimeBuilder;
use crate::dead_letters::DeadLetters;
use crate::error::RuntimeError;
use crate::executor;
use crate::reaper::{self, ReapReport};
use crate::running::StopReason;
use crate::shared::{MAX_CAS_RETRIES, Shared};
use crate::tool::ToolSpec;
use crate::transitions::{self, CANCELLED_BY_CLIENT};
use crate::triage::{self, TriageReport, TriageScope};
use crate::view::{CreateTask, TaskView};

/// Durable, policy-governed task execution over a [`TaskStore`]. Cheap to
/// clone (an `Arc` inside); create one per process.
#[derive(Clone, Debug)]
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
}

impl Runtime {
    /// Starts configuring a runtime on `store`.
    pub fn builder(store: Arc<dyn TaskStore>) -> RuntimeBuilder {
        RuntimeBuilder::new(store)
    }

    /// Runs startup triage (every lease when single-node, else lapsed ones),
    /// then spawns the executor, the reaper timer (reaper pass plus lapsed-lease
    /// triage) and the poll-timestamp flusher. Calling it again does nothing.
    pub async fn start(&self) -> Result<(), RuntimeError> {
        if self.shared.is_stopping() {
            return Err(RuntimeError::ShuttingDown);
        }
        if self.shared.started.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let scope = if self.shared.single_node { TriageScope::AllLeases } else { TriageScope::ExpiredLeases };
        let report = self.triage_once(scope).await?;
        let which = match scope {
            TriageScope::AllLeases => "every lease (single node: their holders are dead)",
            TriageScope::ExpiredLeases => "lapsed leases",
        };
        tracing::info!(
            executor = %self.shared.owner,
            resumed = report.resumed,
            reasked = report.reasked,
            failed = report.failed,
            poisoned = report.poisoned,
            cancelled = report.cancelled,
            "start-up triage of {which}: {report}"
        );
        background::spawn_all(&self.shared);
        Ok(())
    }

    /// Stops claiming and the background loops; lets running handlers finish
    /// within `grace`; then cancels the rest and hands their leases back
    /// without spending an attempt, so the next start resumes them at once.
    pub async fn shutdown(&self, grace: Duration) {
        let shared = &self.shared;
        shared.stopping.store(true, Ordering::SeqCst);
        shared.background_stop.cancel();
        // Wait for an in-flight claim to finish so no handler starts after this.
        drop(shared.claim_lock.lock().await);
        // A handler waiting for input would not finish within any grace:
        // hand it back at once (attempt unspent; the next start asks again).
        let (waiting, executing): (Vec<_>, Vec<_>) =
            shared.running.snapshot().into_iter().partition(|(_, h)| h.is_waiting());
        for (_, handler) in &waiting {
            handler.stop(StopReason::Shutdown);
        }
        if !executing.is_empty() || !waiting.is_empty() {
            tracing::info!(
                running = executing.len(),
                waiting_for_input = waiting.len(),
                grace_ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX),
                "shutdown: waiting up to {} for {} running {}; {} waiting for input handed back",
                humane(grace),
                executing.len(),
                if executing.len() == 1 { "task" } else { "tasks" },
                waiting.len()
            );
        }
        let started = tokio::time::Instant::now();
        let finished = tokio::time::timeout(grace, shared.running.wait_empty()).await.is_ok();
        let left = shared.running.snapshot();
        if finished {
            tracing::info!(waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX), "shutdown: every handler has returned");
        } else {
            tracing::info!(
                left = left.len(),
                "shutdown: grace over; {} still running stopped and handed back for the next start",
                left.len()
            );
        }
        for (id, handler) in left {
            tracing::debug!(task = %id, "handed back at shutdown");
            handler.stop(StopReason::Shutdown);
            handler.abort();
            executor::release_at_shutdown(shared, &id, &handler).await;
            shared.running.remove(&id, &handler);
        }
        crate::leader::resign(shared).await;
        let loops: Vec<_> = shared.background.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        for handle in loops {
            let _ = handle.await;
        }
        if let Err(e) = shared.polls.flush(shared.store.as_ref()).await {
            tracing::warn!(error = %e, "cannot write the last poll timestamps at shutdown");
        }
    }

    /// Creates a task; returns once it is durable. With an idempotency key
    /// already used for the identical call, returns that task instead.
    pub async fn create_task(&self, req: CreateTask) -> Result<TaskView, RuntimeError> {
        Ok(self.create_or_join_task(req).await?.0)
    }

    /// [`create_task`](Self::create_task), also telling whether this call
    /// created the task (`true`) or joined the one its idempotency key
    /// already named (`false`) — a caller that joined must not act as the
    /// task's owner (say, cancel it when its own request goes away).
    ///
    /// Arguments that do not match the tool's input schema are refused with
    /// [`RuntimeError::InvalidArguments`] before anything is stored.
    pub async fn create_or_join_task(&self, req: CreateTask) -> Result<(TaskView, bool), RuntimeError> {
        let shared = &self.shared;
        if shared.is_stopping() {
            return Err(RuntimeError::ShuttingDown);
        }
        let Some(registered) = shared.tools.get(&req.tool) else {
            return Err(RuntimeError::UnknownTool { tool: req.tool, known: shared.tool_names() });
        };
        let violations = registered.arguments.violations(&req.arguments);
        if !violations.is_empty() {
            return Err(RuntimeError::InvalidArguments { tool: req.tool, violations });
        }
        let now = shared.now();
        let created = shared
            .store
            .create(NewTask {
                id: TaskId::random(),
                tool: req.tool,
                arguments: req.arguments,
                principal: req.principal,
                idempotency_key: req.idempotency_key,
                max_attempts: shared.policy.retry.max_attempts,
                created_at: now,
                deadline_at: now.plus(shared.policy.retention.max_execution),
                run_at: now,
                status_message: None,
                quota: Some(shared.quota),
            })
            .await?;
        if created.created {
            shared.wakeups.work_available();
        }
        Ok((shared.view(created.record).await, created.created))
    }

    /// Reads a task (recording the poll in memory, written in batches).
    /// Another principal's task is [`RuntimeError::TaskNotFound`].
    pub async fn get_task(&self, id: &TaskId, principal: Option<&str>) -> Result<TaskView, RuntimeError> {
        let record = self.shared.read_visible(id, principal).await?;
        self.shared.polls.record(id, self.shared.now());
        Ok(self.shared.view(record).await)
    }

    /// Asks to cancel a task; the acknowledgement is durable. An unleased
    /// task (queued, or waiting to retry) is cancelled at once; a running one
    /// is flagged, its handler told at once if it runs here (else at its
    /// executor's next lease renewal), and it ends `cancelled` when the
    /// handler returns — whatever the handler returned. A terminal task is
    /// returned unchanged.
    pub async fn cancel_task(&self, id: &TaskId, principal: Option<&str>) -> Result<TaskView, RuntimeError> {
        let shared = &self.shared;
        for _ in 0..MAX_CAS_RETRIES {
            let record = shared.read_visible(id, principal).await?;
            let now = shared.now();
            // A lapsed lease belongs to a dead or stalled executor: nobody will
            // honour a flag, so cancel directly (a late write by it loses its guard).
            let leased = record.lease.as_ref().is_some_and(|l| l.expires_at > now);
            if record.status.is_terminal() || (record.cancel_requested && leased) {
                shared.running.stop(id, StopReason::CancelRequested);
                return Ok(shared.view(record).await);
            }
            let change = if leased {
                Change {
                    now,
                    cancel_requested: Some(true),
                    status_message: Some(Some("cancellation requested".to_owned())),
                    ..Change::default()
                }
            } else {
                transitions::cancelled(now, &shared.policy.retention, CANCELLED_BY_CLIENT)
            };
            match shared.apply_one(GuardedUpdate::change(Guard::read(&record), change)).await? {
                UpdateOutcome::Applied(Some(after)) => {
                    shared.running.stop(id, StopReason::CancelRequested);
                    return Ok(shared.view(after).await);
                }
                UpdateOutcome::NotFound => return Err(RuntimeError::TaskNotFound(id.clone())),
                _ => tracing::debug!(task = %id, "cancel lost a race; re-reading"),
            }
        }
        Err(contended(id))
    }

    /// Records answers to a task's input requests and wakes its handler.
    /// Unknown and already-answered keys are ignored, as are answers to a
    /// terminal task. An answer that does not fit its request (an
    /// elicitation's unknown action, or accepted content that does not match
    /// its `requestedSchema`) is refused with [`RuntimeError::InvalidAnswer`]:
    /// nothing is stored, and the question stays open for a good answer.
    pub async fn answer_input(
        &self,
        id: &TaskId,
        principal: Option<&str>,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), RuntimeError> {
        let shared = &self.shared;
        for _ in 0..MAX_CAS_RETRIES {
            let record = shared.read_visible(id, principal).await?;
            check_answers(&record, &responses)?;
            let Some(merged) = merge_answers(&record, &responses) else {
                return Ok(());
            };
            let change = Change { now: shared.now(), input_responses: Some(merged), ..Change::default() };
            match shared.apply_one(GuardedUpdate::change(Guard::read(&record), change)).await? {
                UpdateOutcome::Applied(_) => {
                    shared.wakeups.answered(id);
                    return Ok(());
                }
                UpdateOutcome::NotFound => return Err(RuntimeError::TaskNotFound(id.clone())),
                UpdateOutcome::Lost => tracing::debug!(task = %id, "answer lost a race; re-reading"),
            }
        }
        Err(contended(id))
    }

    /// The registered tools' declarations, by name.
    pub fn tools(&self) -> Vec<ToolSpec> {
        self.shared.tools.values().map(|t| t.spec.clone()).collect()
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.shared.policy
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.shared.store
    }

    /// This runtime's lease owner name (unique per runtime).
    pub fn executor_id(&self) -> &str {
        &self.shared.owner
    }

    /// One reaper pass: flush polls; then timeouts → orphans → expiry.
    pub async fn reap_once(&self) -> Result<ReapReport, RuntimeError> {
        reaper::reap_once(&self.shared).await
    }

    /// One triage pass over `scope`.
    pub async fn triage_once(&self, scope: TriageScope) -> Result<TriageReport, RuntimeError> {
        triage::triage_once(&self.shared, scope).await
    }

    /// Writes buffered poll timestamps; returns how many.
    pub async fn flush_polls(&self) -> Result<usize, RuntimeError> {
        Ok(self.shared.polls.flush(self.shared.store.as_ref()).await?)
    }

    /// Claims due tasks up to the free concurrency and spawns their
    /// handlers; returns how many started.
    pub async fn run_due_once(&self) -> Result<usize, RuntimeError> {
        executor::run_due_once(&self.shared).await
    }

    /// How many handlers run in this process now.
    pub fn running(&self) -> usize {
        self.shared.running.len()
    }

    /// Waits until no handler runs in this process (each one's outcome written).
    pub async fn idle(&self) {
        self.shared.running.wait_empty().await
    }

    /// The dead-letter queue.
    pub fn dead_letters(&self) -> DeadLetters<'_> {
        DeadLetters { runtime: self }
    }
}

/// Refuses the first new answer that does not fit its request (answers to
/// unknown or answered keys, or to a terminal task, are ignored anyway).
fn check_answers(record: &TaskRecord, responses: &BTreeMap<String, Value>) -> Result<(), RuntimeError> {
    if record.status.is_terminal() {
        return Ok(());
    }
    for (key, answer) in responses {
        let Some(request) = record.input_requests.get(key).filter(|_| !record.input_responses.contains_key(key)) else {
            continue;
        };
        let violations = crate::answers::answer_violations(request, answer);
        if !violations.is_empty() {
            return Err(RuntimeError::InvalidAnswer { key: key.clone(), violations });
        }
    }
    Ok(())
}

/// The task's answers with the new ones added, or `None` if nothing new
/// applies (unknown or answered keys, or a terminal task).
fn merge_answers(record: &TaskRecord, responses: &BTreeMap<String, Value>) -> Option<BTreeMap<String, Value>> {
    if record.status.is_terminal() {
        return None;
    }
    let mut merged = record.input_responses.clone();
    let mut added = false;
    for (k, v) in responses {
        if record.input_requests.contains_key(k) && !merged.contains_key(k) {
            merged.insert(k.clone(), v.clone());
            added = true;
        }
    }
    added.then_some(merged)
}

/// A duration as an operator reads it: `10 s`, `250 ms`.
fn humane(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 { format!("{} s", d.as_secs()) } else { format!("{} ms", d.as_millis()) }
}

fn contended(id: &TaskId) -> RuntimeError {
    RuntimeError::Store(mcp_tasks_store::StoreError::Unavailable(format!(
        "task {id} kept changing under {MAX_CAS_RETRIES} consecutive attempts to update it; try again"
    )))
}

