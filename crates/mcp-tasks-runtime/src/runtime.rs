//! [`Runtime`]: the one object a server holds. It starts and stops the
//! passes (each holds only what it uses) and carries out the client
//! operations: create, get, and cancel and answer, which read → let the core
//! decide → write guarded on what they read, through [`cas`](crate::cas).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_tasks_core::cancel::{CANCEL_REQUESTED, CancelDecision, decide_cancel};
use mcp_tasks_core::input::{merge_answers, new_answers};
use mcp_tasks_core::{Clock, Policy, TaskId, TaskRecord, TaskStatus};
use mcp_tasks_store::{
    AttemptOutcome, Change, Created, DeadLetterQuery, Guard, GuardedUpdate, NewTask, PollBuffer, Quota, TaskStore,
};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::background::Background;
use crate::cas::{self, Decision, Resolution};
use crate::error::RuntimeError;
use crate::executor::{Dispatch, Executor};
use crate::hints::Hints;
use crate::leader::Leader;
use crate::metrics::{Metrics, Outcome};
use crate::poll_flusher::PollFlusher;
use crate::reaper::{PlannedReap, ReapReport, Reaper};
use crate::registry::Tools;
use crate::running::{Running, StopReason};
use crate::store_events::StoreEvents;
use crate::tool::ToolSpec;
use crate::transitions::{self, CANCELLED_BY_CLIENT};
use crate::triage::{Triage, TriageReport, TriageScope};
use crate::view::{CreateTask, TaskView};
use crate::wakeups::Wakeups;

/// Durable, policy-governed task execution over a [`TaskStore`]. Cheap to
/// clone (an `Arc` inside); create one per process.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<Inner>,
}

/// What the facade holds: the client operations' own needs, and each pass
/// (which holds only what it uses; none reaches into this).
pub(crate) struct Inner {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) policy: Policy,
    /// What one principal may hold; every creation carries it to the store.
    pub(crate) quota: Quota,
    pub(crate) single_node: bool,
    pub(crate) tools: Arc<Tools>,
    pub(crate) hints: Hints,
    /// Poll instants of `tasks/get`, written in batches.
    pub(crate) polls: Arc<PollBuffer>,
    /// Handlers running here: a cancel reaches them at once.
    pub(crate) running: Arc<Running>,
    pub(crate) wakeups: Arc<Wakeups>,
    pub(crate) executor: Arc<Executor>,
    pub(crate) reaper: Arc<Reaper>,
    pub(crate) triage: Arc<Triage>,
    pub(crate) flusher: Arc<PollFlusher>,
    /// Standing in the maintenance election; gates the reaper and lapsed-lease triage.
    pub(crate) leader: Arc<Leader>,
    /// Where the client operations' events and the scraped gauges go.
    pub(crate) metrics: Metrics,
    pub(crate) background: Background,
    pub(crate) started: AtomicBool,
    /// Cancelled by shutdown: no more claims, no new tasks.
    pub(crate) stopping: CancellationToken,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("owner", &self.inner.executor.config.owner)
            .field("tools", &self.inner.tools.names())
            .field("store", &self.inner.store)
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The last handle is gone: stop the timers promptly.
        self.background.stop();
    }
}

impl Runtime {
    /// Runs startup triage (every lease when single-node, else lapsed ones),
    /// then spawns the executor, the reaper timer, lapsed-lease triage (on
    /// the reaper's period) and the poll-timestamp flusher. Calling it again
    /// does nothing.
    pub async fn start(&self) -> Result<(), RuntimeError> {
        let inner = &self.inner;
        if inner.stopping.is_cancelled() {
            return Err(RuntimeError::ShuttingDown);
        }
        if inner.started.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let scope = if inner.single_node { TriageScope::AllLeases } else { TriageScope::ExpiredLeases };
        let report = self.triage_once(scope).await?;
        let which = match scope {
            TriageScope::AllLeases => "every lease (single node: their holders are dead)",
            TriageScope::ExpiredLeases => "lapsed leases",
        };
        tracing::info!(
            executor = %self.executor_id(),
            resumed = report.resumed,
            reasked = report.reasked,
            failed = report.failed,
            poisoned = report.poisoned,
            cancelled = report.cancelled,
            "start-up triage of {which}: {report}"
        );
        let stop = inner.background.stop_token();
        inner.background.keep(inner.leader.spawn(stop.clone()));
        let events =
            StoreEvents { store: inner.store.clone(), running: inner.running.clone(), wakeups: inner.wakeups.clone() };
        if let Some(handle) = events.spawn(stop.clone()) {
            inner.background.keep(handle);
        }
        inner.background.keep(inner.executor.spawn(stop.clone()));
        inner.background.keep(inner.reaper.spawn(stop.clone()));
        inner.background.keep(inner.triage.spawn(stop.clone()));
        inner.background.keep(inner.flusher.spawn(stop));
        Ok(())
    }

    /// Stops claiming and the background loops; lets running handlers finish
    /// within `grace`; then cancels the rest and hands their leases back
    /// without spending an attempt, so the next start resumes them at once.
    pub async fn shutdown(&self, grace: Duration) {
        let inner = &self.inner;
        inner.stopping.cancel();
        inner.background.stop();
        // Wait for an in-flight claim to finish so no handler starts after this.
        inner.executor.wait_for_claims().await;
        // A handler waiting for input would not finish within any grace:
        // hand it back at once (attempt unspent; the next start asks again).
        let (waiting, executing): (Vec<_>, Vec<_>) = inner.running.snapshot().into_iter().partition(|(_, h)| h.is_waiting());
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
        let finished = tokio::time::timeout(grace, inner.running.wait_empty()).await.is_ok();
        let left = inner.running.snapshot();
        if finished {
            tracing::info!(
                waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                "shutdown: every handler has returned"
            );
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
            inner.executor.release_at_shutdown(&id, &handler).await;
            inner.running.remove(&id, &handler);
        }
        inner.leader.resign().await;
        inner.background.stop_and_join().await;
        if let Err(e) = inner.flusher.flush_once().await {
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
        let inner = &self.inner;
        if inner.stopping.is_cancelled() {
            return Err(RuntimeError::ShuttingDown);
        }
        let Some(registered) = inner.tools.get(&req.tool) else {
            return Err(RuntimeError::UnknownTool { tool: req.tool, known: inner.tools.names() });
        };
        let violations = registered.arguments.violations(&req.arguments);
        if !violations.is_empty() {
            return Err(RuntimeError::InvalidArguments { tool: req.tool, violations });
        }
        let now = inner.clock.now();
        // The attempts join the creating span's trace, durably (trace_context.rs).
        let trace_parent = crate::trace_context::traceparent_of(&tracing::Span::current()).or(req.trace_parent);
        // With a slot free and nothing queued, the task is inserted already
        // leased to this executor and starts at once (executor.rs, Dispatch).
        // (The tool is registered: checked above, in the executor's registry too.)
        let dispatch = inner.executor.try_dispatch(now);
        let new = NewTask {
            // Ordered by creation: appended to the id index, not split into it.
            id: TaskId::minted_at(now),
            tool: req.tool,
            arguments: req.arguments,
            principal: req.principal,
            idempotency_key: req.idempotency_key,
            trace_parent,
            max_attempts: inner.policy.retry.max_attempts,
            created_at: now,
            deadline_at: now.plus(inner.policy.retention.max_execution),
            run_at: now,
            status_message: None,
            quota: Some(inner.quota),
            lease: dispatch.as_ref().map(|d| d.lease.clone()),
        };
        let created = if dispatch.is_some() {
            // Once the insert may write this executor's lease, the handler
            // must start even if the caller goes away (a dropped request):
            // a leased task with no handler would wait for its lease to lapse.
            let inserting = tokio::spawn(insert_and_start(inner.clone(), new, dispatch).in_current_span());
            match inserting.await {
                Ok(created) => created?,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(_) => return Err(RuntimeError::ShuttingDown),
            }
        } else {
            insert_and_start(inner.clone(), new, None).await?
        };
        Ok((self.view(created.record).await, created.created))
    }

    /// Reads a task (recording a live task's poll in memory, written in
    /// batches; a finished task's poll writes nothing).
    /// Another principal's task is [`RuntimeError::TaskNotFound`].
    pub async fn get_task(&self, id: &TaskId, principal: Option<&str>) -> Result<TaskView, RuntimeError> {
        let record = self.read_visible(id, principal).await?;
        self.note_poll(&record);
        Ok(self.view(record).await)
    }

    /// [`get_task`](Self::get_task) for an answer that writes the result out
    /// as it is: the result may come as the store's JSON text (checked, not
    /// decoded; the view's `record.result` is then `None`).
    pub async fn get_task_for_answer(
        &self,
        id: &TaskId,
        principal: Option<&str>,
    ) -> Result<(TaskView, Option<Box<RawValue>>), RuntimeError> {
        let read = self
            .inner
            .store
            .get_visible_for_answer(id, principal)
            .await?
            .ok_or_else(|| RuntimeError::TaskNotFound(id.clone()))?;
        self.note_poll(&read.record);
        Ok((self.view(read.record).await, read.result_text))
    }

    /// What a poll of `record` leaves behind: its instant, kept in memory to
    /// be written in a batch, and the poll counted.
    fn note_poll(&self, record: &TaskRecord) {
        let now = self.inner.clock.now();
        // Only a live task can be orphaned, so only its polls are kept; and a
        // recently seen one needs no write: the orphan sweep allows for the slack.
        if record.status.is_live() && self.inner.policy.retention.poll_needs_record(record.last_seen_at(), now) {
            self.inner.polls.record(&record.id, now);
        }
        self.inner.metrics.polled(&record.tool);
    }

    /// Asks to cancel a task; the acknowledgement is durable. An unleased
    /// task (queued, or waiting to retry) is cancelled at once; a running one
    /// is flagged, its handler told at once if it runs here (else at its
    /// executor's next lease renewal), and it ends `cancelled` when the
    /// handler returns — whatever the handler returned. A terminal task is
    /// returned unchanged.
    pub async fn cancel_task(&self, id: &TaskId, principal: Option<&str>) -> Result<TaskView, RuntimeError> {
        let inner = &*self.inner;
        let resolution = cas::read_decide_write(inner.store.as_ref(), || async move {
            let record = self.read_visible(id, principal).await?;
            let now = inner.clock.now();
            let change = match decide_cancel(&record, now) {
                CancelDecision::Unchanged => return Ok(Decision::Done(record)),
                CancelDecision::Request => Change {
                    now,
                    cancel_requested: Some(true),
                    status_message: Some(Some(CANCEL_REQUESTED.to_owned())),
                    ..Change::default()
                },
                CancelDecision::CancelNow => {
                    let change = transitions::cancelled(now, &inner.policy.retention, CANCELLED_BY_CLIENT);
                    let message = Some(CANCELLED_BY_CLIENT.to_owned());
                    let end = transitions::attempt_end(&record, AttemptOutcome::Cancelled, None, None, message);
                    transitions::ending(change, end)
                }
            };
            Ok(Decision::Write(GuardedUpdate::change(Guard::read(&record), change), record))
        })
        .await?;
        // Whatever was written (or had been), a handler here stops at once.
        let record = match resolution {
            Resolution::Done(record) => record,
            Resolution::Applied(Some(after), _) => {
                // Only a cancel that ended the task writes `cancelled`; a requested one leaves it working.
                if after.status == TaskStatus::Cancelled {
                    tracing::info!(task = %after.id, tool = %after.tool, "cancelled by its client");
                    inner.metrics.finished(&after.tool, Outcome::Cancelled);
                }
                *after
            }
            Resolution::Applied(None, _) => self.read_visible(id, principal).await?,
            Resolution::Gone => return Err(RuntimeError::TaskNotFound(id.clone())),
            Resolution::Contended => return Err(cas::contended(id)),
        };
        inner.running.stop(id, StopReason::CancelRequested);
        Ok(self.view(record).await)
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
        let inner = &*self.inner;
        let responses = &responses;
        let resolution = cas::read_decide_write(inner.store.as_ref(), || async move {
            let record = self.read_visible(id, principal).await?;
            check_answers(&record, responses)?;
            let Some(merged) = merge_answers(&record, responses) else { return Ok(Decision::Done(())) };
            let change = Change { now: inner.clock.now(), input_responses: Some(merged), ..Change::default() };
            Ok(Decision::Write(GuardedUpdate::change(Guard::read(&record), change), ()))
        })
        .await?;
        match resolution {
            Resolution::Done(()) => Ok(()),
            Resolution::Applied(..) => {
                inner.wakeups.answered(id);
                Ok(())
            }
            Resolution::Gone => Err(RuntimeError::TaskNotFound(id.clone())),
            Resolution::Contended => Err(cas::contended(id)),
        }
    }

    /// The registered tools' declarations, by name.
    pub fn tools(&self) -> Vec<ToolSpec> {
        self.inner.tools.specs()
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.inner.store
    }

    /// Where this runtime's metrics go.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Sets the gauges counted from the store (tasks by status and tool,
    /// dead letters not requeued). A scrape calls it, so the numbers are as
    /// fresh as the scrape; each is one query (tasks: one count per
    /// (status, tool) pair; dead letters: one listing of the unrequeued ones).
    pub async fn refresh_gauges(&self) -> Result<(), RuntimeError> {
        let inner = &self.inner;
        let counts = inner.store.count_by_status_and_tool().await?;
        inner.metrics.tasks_by_status_and_tool(&counts);
        let query = DeadLetterQuery::default();
        let depth = inner.store.list_dead_letters(query).await?.len();
        inner.metrics.dead_letters(depth);
        Ok(())
    }

    /// This runtime's lease owner name (unique per runtime).
    pub fn executor_id(&self) -> &str {
        &self.inner.executor.config.owner
    }

    /// One reaper pass: flush polls; then timeouts → orphans → expiry.
    pub async fn reap_once(&self) -> Result<ReapReport, RuntimeError> {
        self.inner.reaper.reap_once().await
    }

    /// What the next reaper pass would do, changing nothing: each task a
    /// sweep would act on (timeouts → orphans → expiry, a task once) and the
    /// core's decision for it, over the same candidates a pass reads.
    pub async fn reap_plan(&self) -> Result<Vec<PlannedReap>, RuntimeError> {
        self.inner.reaper.plan_once().await
    }

    /// One triage pass over `scope`.
    pub async fn triage_once(&self, scope: TriageScope) -> Result<TriageReport, RuntimeError> {
        self.inner.triage.triage_once(scope).await
    }

    /// Campaigns for maintenance leadership once (the background loop does
    /// this every third of the leader lease); returns whether this runtime
    /// leads now.
    pub async fn campaign_once(&self) -> bool {
        self.inner.leader.campaign_once().await
    }

    /// Whether this runtime leads maintenance now (by its clock, against
    /// the end of the term it last won).
    pub fn is_leader(&self) -> bool {
        self.inner.leader.leads()
    }

    /// The leader's maintenance pass: if this runtime leads, one reaper pass
    /// and then lapsed-lease triage (what the leader's timers run); `None` if
    /// it does not lead.
    pub async fn maintain_once(&self) -> Result<Option<(ReapReport, TriageReport)>, RuntimeError> {
        if !self.is_leader() {
            return Ok(None);
        }
        let reaped = self.reap_once().await?;
        let triaged = self.triage_once(TriageScope::ExpiredLeases).await?;
        Ok(Some((reaped, triaged)))
    }

    /// Writes buffered poll timestamps; returns how many.
    pub async fn flush_polls(&self) -> Result<usize, RuntimeError> {
        self.inner.flusher.flush_once().await
    }

    /// Claims due tasks up to the free concurrency and spawns their
    /// handlers; returns how many started.
    pub async fn run_due_once(&self) -> Result<usize, RuntimeError> {
        self.inner.executor.run_due_once().await
    }

    /// How many handlers run in this process now.
    pub fn running(&self) -> usize {
        self.inner.running.len()
    }

    /// Waits until no handler runs in this process (each one's outcome written).
    pub async fn idle(&self) {
        self.inner.running.wait_empty().await
    }

    /// Reads a task the caller may see: another principal's task is
    /// reported exactly like a missing one.
    pub(crate) async fn read_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<TaskRecord, RuntimeError> {
        self.inner.store.get_visible(id, principal).await?.ok_or_else(|| RuntimeError::TaskNotFound(id.clone()))
    }

    /// The wire view of `record`: the numbers the server advertises with it.
    pub(crate) async fn view(&self, record: TaskRecord) -> TaskView {
        let inner = &self.inner;
        let retention = &inner.policy.retention;
        TaskView {
            ttl_ms: retention.ttl_ms(&record),
            poll_interval_ms: inner.hints.poll_interval_ms(&record.tool, inner.store.as_ref(), inner.clock.now()).await,
            orphan_window_ms: u64::try_from(retention.orphan_after.as_millis()).unwrap_or(u64::MAX),
            record,
        }
    }

    /// The clock every decision reads.
    pub(crate) fn now(&self) -> mcp_tasks_core::Timestamp {
        self.inner.clock.now()
    }

    /// Wakes the executor: work is due.
    pub(crate) fn work_available(&self) {
        self.inner.wakeups.work_available();
    }
}

/// Inserts `new` and, if it was created holding `dispatch`'s lease, starts
/// its handler; otherwise wakes the claim loop for it (or gives an unused
/// dispatch's slot back).
async fn insert_and_start(inner: Arc<Inner>, new: NewTask, dispatch: Option<Dispatch>) -> Result<Created, RuntimeError> {
    let created = match inner.store.create(new).await {
        Ok(created) => created,
        Err(e) => {
            give_back(&inner, dispatch);
            return Err(e.into());
        }
    };
    if created.created {
        let record = &created.record;
        tracing::info!(task = %record.id, tool = %record.tool, principal = record.principal.as_deref().unwrap_or(""), "task created");
        inner.metrics.created(&record.tool);
    }
    match dispatch {
        Some(dispatch) if created.created && dispatch.holds(&created.record) => {
            inner.executor.start_dispatched(created.record.clone(), dispatch).await;
        }
        unused => {
            give_back(&inner, unused);
            if created.created {
                // Queued for a claim.
                inner.wakeups.work_available();
            }
        }
    }
    Ok(created)
}

/// Gives an unused dispatch's slot back and wakes the claim loop, which
/// may have found no slot while this one was held.
fn give_back(inner: &Inner, dispatch: Option<Dispatch>) {
    if let Some(dispatch) = dispatch {
        drop(dispatch);
        inner.wakeups.slot_freed();
    }
}

/// Refuses the first new answer that does not fit its request (answers to
/// unknown or answered keys, or to a terminal task, are ignored anyway).
fn check_answers(record: &TaskRecord, responses: &BTreeMap<String, Value>) -> Result<(), RuntimeError> {
    for (key, request, answer) in new_answers(record, responses) {
        let violations = crate::answers::answer_violations(request, answer);
        if !violations.is_empty() {
            return Err(RuntimeError::InvalidAnswer { key: key.clone(), violations });
        }
    }
    Ok(())
}

/// A duration as an operator reads it: `10 s`, `250 ms`.
fn humane(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 { format!("{} s", d.as_secs()) } else { format!("{} ms", d.as_millis()) }
}
