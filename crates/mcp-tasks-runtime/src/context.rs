//! [`TaskContext`]: what a running handler sees of its task and can do to it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_core::input::{self, AskDecision};
use mcp_tasks_core::{Clock, TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, TaskStore, UpdateOutcome};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::cas::{self, Decision, Resolution};
use crate::error::{Cancelled, RuntimeError};
use crate::running::RunningHandler;
use crate::wakeups::{InputSubscription, Wakeups};

/// How often a handler waiting for input re-reads the store, in case the
/// answer arrived through another instance (in-process answers wake it at once).
pub const INPUT_RECHECK: Duration = Duration::from_millis(500);

/// What every handler of one runtime reaches through its context: the
/// store it writes to, the clock, the wake-ups of answered questions, and
/// the executor slots it gives back while it waits.
pub(crate) struct HandlerEnv {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) wakeups: Arc<Wakeups>,
    pub(crate) slots: Arc<Semaphore>,
}

/// The handle a tool's [`run`](crate::TaskTool::run) gets for one attempt.
/// Cheap to clone.
///
/// Like rmcp's `RequestContext`, it carries the request's identity (the
/// task id, the principal) and its cancellation token; unlike it, every
/// write through it is durable and fenced by this attempt's lease, and it
/// outlives the `tools/call` that created the task.
///
/// What a handler does through it, one feature each:
///
/// ```
/// use std::collections::BTreeMap;
/// use std::time::Duration;
/// use mcp_tasks_runtime::{RuntimeError, TaskContext, ToolFailure};
/// use serde_json::{Value, json};
///
/// async fn publish(ctx: TaskContext) -> Result<Value, ToolFailure> {
///     let fail = |e: RuntimeError| ToolFailure::permanent(e.to_string());
///
///     // Status messages: seen by every client polling tasks/get, on any instance.
///     ctx.set_status_message("drafting").await.map_err(fail)?;
///
///     // The attempt number: 1 on the first run, higher after a retry or a
///     // restart resumed the task (when the tool is safe to re-run).
///     if ctx.attempt() > 1 {
///         ctx.set_status_message(format!("resuming, attempt {}", ctx.attempt())).await.map_err(fail)?;
///     }
///
///     // Asking for input: the task turns `input_required`, the question is
///     // stored, and the answer may come through any instance, even after a
///     // restart; a re-run handler gets a stored answer back without asking
///     // again. Each request is an MCP input request (here an elicitation
///     // with a JSON schema for the answer).
///     let question = json!({
///         "method": "elicitation/create",
///         "params": {
///             "mode": "form",
///             "message": "Publish to which channel?",
///             "requestedSchema": {
///                 "type": "object",
///                 "properties": {"channel": {"type": "string", "enum": ["blog", "newsletter"]}},
///                 "required": ["channel"]
///             }
///         }
///     });
///     let answers = ctx.request_input(BTreeMap::from([("channel".to_owned(), question)])).await.map_err(fail)?;
///     let channel = answers["channel"]["content"]["channel"].as_str().unwrap_or("blog").to_owned();
///
///     // Cancellation: `sleep` ends early when the client cancels, the task
///     // times out or is taken over, or the server shuts down; long loops
///     // check `is_cancelled` (or select on `cancellation()`).
///     for _ in 0..3 {
///         if ctx.is_cancelled() {
///             return Err(ToolFailure::permanent("cancelled"));
///         }
///         ctx.sleep(Duration::from_millis(10)).await?;
///     }
///
///     // A wait that survives a restart: sleep until an instant derived from
///     // something stored (here the task's creation), so a re-run waits only
///     // what is left instead of starting the wait again.
///     ctx.sleep_until(ctx.created_at().plus(Duration::from_millis(50))).await?;
///
///     // Idempotent side effects: a key that is the same on every attempt,
///     // instance and restart of this task, for an external service that
///     // deduplicates by key (payments, e-mail, another job queue).
///     let key = ctx.idempotency_key("announce");
///
///     Ok(json!({"content": [{"type": "text", "text": format!("published to {channel} (key {key})")}]}))
/// }
/// ```
#[derive(Clone)]
pub struct TaskContext {
    inner: Arc<Inner>,
}

struct Inner {
    env: Arc<HandlerEnv>,
    task_id: TaskId,
    arguments: Value,
    created_at: Timestamp,
    attempt: u32,
    max_attempts: u32,
    principal: Option<String>,
    token: CancellationToken,
    /// This attempt's handler: its lease holder and executor slot.
    handler: Arc<RunningHandler>,
}

impl std::fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskContext")
            .field("task_id", &self.inner.task_id)
            .field("attempt", &self.inner.attempt)
            .field("max_attempts", &self.inner.max_attempts)
            .finish_non_exhaustive()
    }
}

impl TaskContext {
    pub(crate) fn new(env: Arc<HandlerEnv>, record: &mut TaskRecord, handler: Arc<RunningHandler>) -> Self {
        TaskContext {
            inner: Arc::new(Inner {
                env,
                task_id: record.id.clone(),
                // The executor keeps only the record's identity after this.
                arguments: std::mem::take(&mut record.arguments),
                created_at: record.created_at,
                attempt: record.attempt,
                max_attempts: record.max_attempts,
                principal: record.principal.clone(),
                token: handler.token.clone(),
                handler,
            }),
        }
    }

    /// The task's id.
    pub fn task_id(&self) -> &TaskId {
        &self.inner.task_id
    }

    /// The tool's arguments.
    pub fn arguments(&self) -> &Value {
        &self.inner.arguments
    }

    /// When the task was created (stored, so the same on every attempt and
    /// after a restart): the anchor for [`sleep_until`](Self::sleep_until).
    pub fn created_at(&self) -> Timestamp {
        self.inner.created_at
    }

    /// A key for one side effect of this task (`step` names it): the same on
    /// every attempt, instance and restart, different for every task. Send it
    /// to an external service that deduplicates by key, so a re-run handler
    /// that repeats the call does not repeat the effect.
    pub fn idempotency_key(&self, step: &str) -> String {
        format!("{}/{step}", self.inner.task_id)
    }

    /// This attempt's number, from 1.
    pub fn attempt(&self) -> u32 {
        self.inner.attempt
    }

    /// The task's attempt ceiling.
    pub fn max_attempts(&self) -> u32 {
        self.inner.max_attempts
    }

    /// The principal that owns the task, if any.
    pub fn principal(&self) -> Option<&str> {
        self.inner.principal.as_deref()
    }

    /// Now, by the runtime's clock.
    pub fn now(&self) -> Timestamp {
        self.inner.env.clock.now()
    }

    /// Cancelled when the client cancels, the task is taken over (lease
    /// lost, timed out) or the server shuts down: the handler should stop.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.token
    }

    /// Whether [`cancellation`](Self::cancellation) has fired.
    pub fn is_cancelled(&self) -> bool {
        self.inner.token.is_cancelled()
    }

    /// Sleeps for `d` (real time), ending early with `Err` if cancelled.
    pub async fn sleep(&self, d: Duration) -> Result<(), Cancelled> {
        tokio::select! {
            _ = self.inner.token.cancelled() => Err(Cancelled),
            _ = tokio::time::sleep(d) => Ok(()),
        }
    }

    /// Sleeps until `at` by the runtime's clock (at once if it has passed),
    /// ending early with `Err` if cancelled. With `at` derived from a stored
    /// instant ([`created_at`](Self::created_at) plus a delay), the wait
    /// survives a restart: the re-run handler sleeps only what is left.
    pub async fn sleep_until(&self, at: Timestamp) -> Result<(), Cancelled> {
        let now = self.now();
        let left = if at > now { at.since(now) } else { Duration::ZERO };
        self.sleep(left).await
    }

    /// The guard every write of this handler carries: it still holds the
    /// lease of its own claim (not merely one of this runtime) for this attempt.
    fn own_guard(&self) -> Guard {
        Guard {
            lease_owner: Some(self.inner.handler.holder.clone()),
            attempt: Some(self.inner.attempt),
            ..Guard::id(self.inner.task_id.clone())
        }
    }

    /// Sets the task's status message (guarded on this handler's lease).
    /// A short span of its own in the attempt's trace: ended (so exported)
    /// while the attempt still runs, it shows progress even of an attempt
    /// whose process dies before the attempt's own span ends.
    pub async fn set_status_message(&self, msg: impl Into<String>) -> Result<(), RuntimeError> {
        let env = &self.inner.env;
        let msg = msg.into();
        let span = tracing::info_span!(target: crate::trace_context::TRACE_TARGET, "task.status_message", message = %msg);
        let change = Change { now: env.clock.now(), status_message: Some(Some(msg)), ..Change::default() };
        let write = cas::apply_one(env.store.as_ref(), GuardedUpdate::change(self.own_guard(), change));
        match tracing::Instrument::instrument(write, span).await? {
            UpdateOutcome::Applied(_) => Ok(()),
            _ => Err(RuntimeError::LeaseLost(self.inner.task_id.clone())),
        }
    }

    /// Reads the task and checks this handler still owns it and may go on.
    async fn read_own(&self) -> Result<TaskRecord, RuntimeError> {
        let id = &self.inner.task_id;
        if self.is_cancelled() {
            return Err(RuntimeError::Cancelled(id.clone()));
        }
        let record = self.inner.env.store.get(id).await?.ok_or_else(|| RuntimeError::LeaseLost(id.clone()))?;
        let owned = record.status.is_live()
            && record.attempt == self.inner.attempt
            && record.lease.as_ref().is_some_and(|l| l.owner == self.inner.handler.holder);
        if !owned {
            return Err(RuntimeError::LeaseLost(id.clone()));
        }
        if record.cancel_requested {
            return Err(RuntimeError::Cancelled(id.clone()));
        }
        Ok(record)
    }

    /// Durable input requests (MRTR `inputRequests`): stores `requests`, sets
    /// the task `input_required`, waits until every key is answered (through
    /// [`Runtime::answer_input`](crate::Runtime::answer_input)), sets it
    /// `working` again and returns the answers. Keys answered before (even
    /// before a restart) return at once, so a re-run handler never asks twice.
    /// A key already stored keeps its first request. Fails if cancelled.
    ///
    /// While it waits, the handler holds no executor slot (other tasks run in
    /// it) but keeps its lease; once answered it takes a slot again before
    /// this returns.
    pub async fn request_input(&self, requests: BTreeMap<String, Value>) -> Result<BTreeMap<String, Value>, RuntimeError> {
        let env = &self.inner.env;
        let id = &self.inner.task_id;
        // Subscribe before the first read so an answer in between is not missed.
        let mut subscription = env.wakeups.subscribe(id);

        // Store the requests (unless already answered or stored).
        let asked = &requests;
        let resolution = cas::read_decide_write(env.store.as_ref(), || async move {
            let record = self.read_own().await?;
            let (requests, pending) = match input::ask(&record, asked) {
                AskDecision::Answered(answers) => return Ok(Decision::Done(Some(answers))),
                AskDecision::Stored => return Ok(Decision::Done(None)),
                AskDecision::Store { requests, pending } => (requests, pending),
            };
            let change = Change {
                now: env.clock.now(),
                status: Some(TaskStatus::InputRequired),
                status_message: Some(Some(format!("waiting for input: {}", pending.join(", ")))),
                input_requests: Some(requests),
                ..Change::default()
            };
            Ok(Decision::Write(GuardedUpdate::change(self.guard_on(&record), change), None))
        })
        .await?;
        match resolution {
            Resolution::Done(Some(answers)) => return Ok(answers),
            Resolution::Done(None) | Resolution::Applied(..) => {}
            Resolution::Gone | Resolution::Contended => return Err(RuntimeError::LeaseLost(id.clone())),
        }

        // Waiting executes nothing: give the slot back meanwhile.
        let handler = &self.inner.handler;
        if handler.park() {
            env.wakeups.slot_freed();
        }
        let answers = self.wait_for_answers(&mut subscription, asked).await;
        match answers {
            Ok(answers) if handler.unpark(&env.slots).await => Ok(answers),
            Ok(_) => Err(RuntimeError::Cancelled(id.clone())),
            Err(e) => {
                // Told to stop: it goes on without a slot only to return.
                handler.stop_waiting();
                Err(e)
            }
        }
    }

    /// This handler's guard on the version of `record` it read, refusing a
    /// task whose cancel was requested meanwhile.
    fn guard_on(&self, record: &TaskRecord) -> Guard {
        Guard { version: Some(record.version), cancel_requested: Some(false), ..self.own_guard() }
    }

    /// Waits until every requested key is answered, then sets the task
    /// `working` again (unless parallel requests of this handler still wait).
    async fn wait_for_answers(
        &self,
        subscription: &mut InputSubscription<'_>,
        asked: &BTreeMap<String, Value>,
    ) -> Result<BTreeMap<String, Value>, RuntimeError> {
        let env = &self.inner.env;
        let id = &self.inner.task_id;
        loop {
            tokio::select! {
                _ = self.inner.token.cancelled() => return Err(RuntimeError::Cancelled(id.clone())),
                _ = subscription.answered() => {}
                _ = tokio::time::sleep(INPUT_RECHECK) => {}
            }
            let resolution = cas::read_decide_write(env.store.as_ref(), || async move {
                let record = self.read_own().await?;
                let Some(answers) = input::answers_to(&record, asked) else { return Ok(Decision::Done(None)) };
                if !input::resume_after_answers(&record) {
                    return Ok(Decision::Done(Some(answers)));
                }
                let change = Change {
                    now: env.clock.now(),
                    status: Some(TaskStatus::Working),
                    status_message: Some(Some("input received; working".to_owned())),
                    ..Change::default()
                };
                Ok(Decision::Write(GuardedUpdate::change(self.guard_on(&record), change), Some(answers)))
            })
            .await?;
            match resolution {
                // Not all answered yet: wait again.
                Resolution::Done(None) => {}
                Resolution::Done(Some(answers)) | Resolution::Applied(_, Some(answers)) => return Ok(answers),
                Resolution::Applied(_, None) | Resolution::Gone | Resolution::Contended => {
                    return Err(RuntimeError::LeaseLost(id.clone()));
                }
            }
        }
    }
}
