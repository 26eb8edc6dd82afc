//! One parameter struct per store operation (River's driver style), so a
//! store method's meaning never hides in positional arguments.

use mcp_tasks_core::task::{InputRequests, InputResponses};
use mcp_tasks_core::{FailureClass, Lease, TaskError, TaskId, TaskRecord, TaskStatus, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A task to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    /// Its id (callers generate it: [`TaskId::random`]).
    pub id: TaskId,
    /// The tool that will run it.
    pub tool: String,
    /// The tool's arguments.
    pub arguments: Value,
    /// The authenticated principal that owns it, if any.
    pub principal: Option<String>,
    /// An idempotency key, unique per principal while the task exists.
    pub idempotency_key: Option<String>,
    /// The W3C `traceparent` its attempts' spans join (see
    /// [`TaskRecord::trace_parent`]); never changed after creation.
    pub trace_parent: Option<String>,
    /// Attempt ceiling for this task.
    pub max_attempts: u32,
    /// Creation instant (also `updated_at`).
    pub created_at: Timestamp,
    /// Instant it must be terminal by.
    pub deadline_at: Timestamp,
    /// When it may first be claimed (normally `created_at`).
    pub run_at: Timestamp,
    /// Initial status message.
    pub status_message: Option<String>,
    /// The most the principal may hold in the store, checked atomically with
    /// the insert; `None` for no limit.
    pub quota: Option<Quota>,
    /// Dispatch at creation: the lease of the executor that will run it at
    /// once, written by the insert itself, so no claim has to find it. Only
    /// for a task due now (`run_at` ≤ `created_at`); an idempotent join
    /// leaves the existing task's lease as it was. `None` queues it.
    pub lease: Option<Lease>,
}

impl NewTask {
    /// The row every store first writes for this task: `working`, attempt 1,
    /// version 1, due at `run_at`, leased only if dispatched, unpolled, nothing asked or
    /// answered. `fingerprint` is [`call_fingerprint`](mcp_tasks_core::call_fingerprint)
    /// of its tool and arguments (the caller computed it for the idempotency
    /// check). A store answers a creation with it rather than reading the
    /// row back: the insert wrote exactly this.
    pub fn into_record(self, fingerprint: String) -> TaskRecord {
        TaskRecord {
            id: self.id,
            version: 1,
            tool: self.tool,
            arguments: self.arguments,
            principal: self.principal,
            status: TaskStatus::Working,
            status_message: self.status_message,
            attempt: 1,
            max_attempts: self.max_attempts,
            created_at: self.created_at,
            updated_at: self.created_at,
            deadline_at: self.deadline_at,
            run_at: Some(self.run_at),
            lease: self.lease,
            last_polled_at: None,
            cancel_requested: false,
            terminal_at: None,
            expires_at: None,
            result: None,
            error: None,
            input_requests: InputRequests::new(),
            input_responses: InputResponses::new(),
            idempotency_key: self.idempotency_key,
            fingerprint,
            trace_parent: self.trace_parent,
        }
    }
}

/// The most one principal may hold in a store at once, counting every row
/// it owns, live or retained (a row stops counting when it is deleted, i.e.
/// when it expires). The anonymous principal is one principal: every caller
/// without a principal shares its quota. Each unset limit is no limit.
///
/// A store checks it inside the transaction that inserts the task, so
/// concurrent creations can never overshoot it; a creation that would
/// exceed it fails with [`StoreError::QuotaExceeded`](crate::StoreError::QuotaExceeded)
/// and changes nothing. An idempotent replay (the key already bound to the
/// same call) adds nothing and is never refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Quota {
    /// Most tasks stored.
    pub max_tasks: Option<u64>,
    /// Most bytes of tool arguments stored (their compact JSON text).
    pub max_argument_bytes: Option<u64>,
}

/// What a [`Quota`] limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaResource {
    /// The number of stored tasks.
    Tasks,
    /// The bytes of stored tool arguments.
    ArgumentBytes,
}

impl Quota {
    /// Checks that a principal holding `tasks` tasks with `argument_bytes`
    /// bytes of arguments may store one more whose arguments take
    /// `new_bytes`; the error names the limit that would be passed.
    pub fn admit(
        &self,
        principal: Option<&str>,
        tasks: u64,
        argument_bytes: u64,
        new_bytes: u64,
    ) -> Result<(), crate::StoreError> {
        let exceeded = |resource, used, limit| crate::StoreError::QuotaExceeded {
            principal: principal.map(str::to_owned),
            resource,
            used,
            limit,
        };
        if let Some(limit) = self.max_tasks
            && tasks.saturating_add(1) > limit
        {
            return Err(exceeded(QuotaResource::Tasks, tasks, limit));
        }
        if let Some(limit) = self.max_argument_bytes
            && argument_bytes.saturating_add(new_bytes) > limit
        {
            return Err(exceeded(QuotaResource::ArgumentBytes, argument_bytes, limit));
        }
        Ok(())
    }
}

/// The size a task's arguments count for against
/// [`Quota::max_argument_bytes`]: their compact JSON text, as stored.
pub fn argument_bytes(arguments: &Value) -> u64 {
    serde_json::to_string(arguments).map_or(0, |text| text.len() as u64)
}

/// What [`TaskStore::create`](crate::TaskStore::create) did.
#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    /// The task as stored.
    pub record: TaskRecord,
    /// False when the idempotency key matched an existing identical call and
    /// that task was returned instead.
    pub created: bool,
}

/// Parameters of a claim: take up to `limit` due tasks and lease them.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimParams {
    /// The claiming executor.
    pub owner: String,
    /// Now: tasks with `run_at <= now` are due.
    pub now: Timestamp,
    /// Lease expiry for what is claimed.
    pub lease_expires_at: Timestamp,
    /// Most tasks to claim.
    pub limit: usize,
    /// Only these tools (the ones this executor can run); `None` for any.
    pub tools: Option<Vec<String>>,
}

/// The conditions a guarded update requires of the row. Unset fields are not
/// checked. A live status is always required for a [`Change`]; a terminal one
/// for a [`Update::Delete`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Guard {
    /// The task.
    pub id: TaskId,
    /// The row's exact version (what the caller read).
    pub version: Option<i64>,
    /// The row's status.
    pub status: Option<TaskStatus>,
    /// The row's attempt.
    pub attempt: Option<u32>,
    /// The lease owner (an executor that still holds its lease).
    pub lease_owner: Option<String>,
    /// The cancel flag.
    pub cancel_requested: Option<bool>,
    /// No poll recorded after this instant (the orphan sweep's guard, since
    /// poll timestamps do not bump the version).
    pub last_seen_at_or_before: Option<Timestamp>,
}

impl Guard {
    /// A guard on the id alone.
    pub fn id(id: TaskId) -> Self {
        Guard { id, ..Guard::default() }
    }

    /// A guard that the row is exactly as `record` was read.
    pub fn read(record: &TaskRecord) -> Self {
        Guard { id: record.id.clone(), version: Some(record.version), ..Guard::default() }
    }
}

/// Field changes; `None` leaves a field as it is. Applying a change bumps the
/// version, and sets `updated_at` to `now` when the change
/// [is visible](Change::is_visible) to clients.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Change {
    /// The instant of the change.
    pub now: Timestamp,
    /// New status.
    pub status: Option<TaskStatus>,
    /// New status message (`Some(None)` clears it).
    pub status_message: Option<Option<String>>,
    /// New attempt number.
    pub attempt: Option<u32>,
    /// New attempt ceiling.
    pub max_attempts: Option<u32>,
    /// New due instant (`Some(None)`: not to be claimed).
    pub run_at: Option<Option<Timestamp>>,
    /// New lease (`Some(None)` releases it).
    pub lease: Option<Option<Lease>>,
    /// New cancel flag.
    pub cancel_requested: Option<bool>,
    /// Terminal instant.
    pub terminal_at: Option<Timestamp>,
    /// Expiry instant (`Some(None)` clears it).
    pub expires_at: Option<Option<Timestamp>>,
    /// The result of a completed task.
    pub result: Option<Value>,
    /// The error of a failed task.
    pub error: Option<TaskError>,
    /// Replaces the input requests.
    pub input_requests: Option<InputRequests>,
    /// Replaces the input responses.
    pub input_responses: Option<InputResponses>,
    /// A dead letter to insert in the same transaction.
    pub dead_letter: Option<NewDeadLetter>,
    /// The attempt this change ends, recorded in the task's attempt history
    /// in the same transaction (so a lost race records nothing).
    pub attempt_end: Option<AttemptEnd>,
}

impl Change {
    /// Whether the change alters what a client sees of the task: its status,
    /// status message, result, error, input requests or answers. Only such a
    /// change moves `updated_at` (the wire's `lastUpdatedAt`); a lease
    /// renewal, a cancel flag or a new due instant alone do not, so a running
    /// task does not look freshly updated every lease period.
    pub fn is_visible(&self) -> bool {
        self.status.is_some()
            || self.status_message.is_some()
            || self.result.is_some()
            || self.error.is_some()
            || self.input_requests.is_some()
            || self.input_responses.is_some()
    }
}

/// What to do to a guarded row.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// Change fields of a live task.
    Change(Box<Change>),
    /// Delete a terminal task (the expiry sweep; releases its idempotency key).
    Delete,
}

/// An update and the guard it requires.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardedUpdate {
    /// Conditions on the row.
    pub guard: Guard,
    /// What to do when they hold.
    pub update: Update,
}

impl GuardedUpdate {
    /// A change under `guard`.
    pub fn change(guard: Guard, change: Change) -> Self {
        GuardedUpdate { guard, update: Update::Change(Box::new(change)) }
    }

    /// A deletion under `guard`.
    pub fn delete(guard: Guard) -> Self {
        GuardedUpdate { guard, update: Update::Delete }
    }
}

/// The outcome of one guarded update.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // short-lived values; boxing would change the shape callers match on
pub enum UpdateOutcome {
    /// The guard held; the row after the change (`None` after a delete).
    Applied(Option<TaskRecord>),
    /// The row exists but the guard did not hold (a lost race, or a terminal
    /// task): nothing changed.
    Lost,
    /// No such task.
    NotFound,
}

impl UpdateOutcome {
    /// Whether the update took effect.
    pub fn applied(&self) -> bool {
        matches!(self, UpdateOutcome::Applied(_))
    }
}

/// Candidate rows for a maintenance pass, each served by an index so its
/// cost follows the rows returned, not the table size. Results are ordered by
/// the instant the query filters on, oldest first, then by id. "Live" means
/// `working` or `input_required`.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepQuery {
    /// Live tasks with `deadline_at <= now`.
    PastDeadline {
        /// Now.
        now: Timestamp,
        /// Most rows.
        limit: usize,
    },
    /// Live tasks whose last poll (or creation, if never polled) is at or
    /// before `cutoff`.
    Unseen {
        /// Silence cutoff (now − orphan window).
        cutoff: Timestamp,
        /// Most rows.
        limit: usize,
    },
    /// Terminal tasks with `expires_at <= now`.
    Expired {
        /// Now.
        now: Timestamp,
        /// Most rows.
        limit: usize,
    },
    /// Live tasks holding a lease that lapses at or before `before`, or any
    /// lease when `before` is `None` (single-node restart: every lease
    /// belongs to a dead process).
    Leased {
        /// Lease expiry cutoff.
        before: Option<Timestamp>,
        /// Most rows.
        limit: usize,
    },
}

/// A listing of tasks for operators.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListQuery {
    /// Only these statuses (all when empty).
    pub statuses: Vec<TaskStatus>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Only tasks of this principal.
    pub principal: Option<String>,
    /// Only tasks created strictly before this instant.
    pub created_before: Option<Timestamp>,
    /// Only tasks created at or after this instant.
    pub created_since: Option<Timestamp>,
    /// Only tasks whose id starts with this text (an operator's abbreviation).
    pub id_prefix: Option<String>,
    /// Most rows (newest first); 0 means no limit.
    pub limit: usize,
}

/// How one attempt of a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// The tool returned a result.
    Completed,
    /// The tool failed (retried after, or for good: see the class).
    Failed,
    /// Its executor stopped holding the lease (died or stalled); triage decided what next.
    LeaseLapsed,
    /// It was cancelled (by its client, an operator, or as an orphan).
    Cancelled,
    /// The task passed its deadline.
    TimedOut,
}

impl AttemptOutcome {
    /// The outcome as stored and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Completed => "completed",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::LeaseLapsed => "lease_lapsed",
            AttemptOutcome::Cancelled => "cancelled",
            AttemptOutcome::TimedOut => "timed_out",
        }
    }

    /// Parses [`as_str`](Self::as_str)'s text.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Completed, Self::Failed, Self::LeaseLapsed, Self::Cancelled, Self::TimedOut]
            .into_iter()
            .find(|o| o.as_str() == text)
    }
}

impl std::fmt::Display for AttemptOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The end of one attempt, carried by the [`Change`] that ends it. The caller
/// read the row it guards on, so it names the attempt and its lease holder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptEnd {
    /// The attempt that ended (the row's attempt before the change).
    pub attempt: u32,
    /// When it started (its claim), if known: a dead executor's start is not.
    pub started_at: Option<Timestamp>,
    /// The lease holder that ran it, if any held it.
    pub owner: Option<String>,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The failure's class, for a failure that was classified.
    pub class: Option<FailureClass>,
    /// The error it ended with, if any.
    pub error: Option<TaskError>,
    /// Why, in words (a cancel's reason, what triage decided).
    pub message: Option<String>,
}

/// One attempt of a task, as its history keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// The task.
    pub task_id: TaskId,
    /// The attempt number.
    pub attempt: u32,
    /// When it started, if known.
    pub started_at: Option<Timestamp>,
    /// When it ended (the instant of the change that ended it).
    pub ended_at: Timestamp,
    /// The lease holder that ran it, if any.
    pub owner: Option<String>,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The failure's class, if classified.
    pub class: Option<FailureClass>,
    /// The error it ended with.
    pub error: Option<TaskError>,
    /// Why, in words.
    pub message: Option<String>,
}

impl AttemptRecord {
    /// The history row `end` makes for `task` at `ended_at`.
    pub fn from_end(task_id: TaskId, ended_at: Timestamp, end: AttemptEnd) -> Self {
        AttemptRecord {
            task_id,
            attempt: end.attempt,
            started_at: end.started_at,
            ended_at,
            owner: end.owner,
            outcome: end.outcome,
            class: end.class,
            error: end.error,
            message: end.message,
        }
    }
}

/// A dead letter to write alongside a task's final failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewDeadLetter {
    /// Why it was dead-lettered (e.g. "poison: attempts exhausted").
    pub reason: String,
    /// The final error.
    pub error: TaskError,
    /// When.
    pub dead_at: Timestamp,
}

/// A task that ended for good and needs an operator: poison, or crash-looped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// The dead-lettered task (its row may since have expired).
    pub task_id: TaskId,
    /// Its tool.
    pub tool: String,
    /// Its arguments, kept so it can be requeued after the task row expires.
    pub arguments: Value,
    /// Its principal.
    pub principal: Option<String>,
    /// Attempts it used.
    pub attempts: u32,
    /// Why it was dead-lettered.
    pub reason: String,
    /// The final error.
    pub error: TaskError,
    /// When.
    pub dead_at: Timestamp,
    /// The fresh task it was requeued as, if it was.
    pub requeued_as: Option<TaskId>,
}

/// A listing of dead letters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeadLetterQuery {
    /// Only this tool.
    pub tool: Option<String>,
    /// Only those dead strictly before this instant.
    pub dead_before: Option<Timestamp>,
    /// Only those dead at or after this instant.
    pub dead_since: Option<Timestamp>,
    /// Only those whose task id starts with this text.
    pub id_prefix: Option<String>,
    /// Include those already requeued.
    pub include_requeued: bool,
    /// Most rows (newest first); 0 means no limit.
    pub limit: usize,
}

/// Which dead letters to purge.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PurgeQuery {
    /// Only these tasks (all matching the other filters when `None`).
    pub task_ids: Option<Vec<TaskId>>,
    /// Only dead before this instant.
    pub dead_before: Option<Timestamp>,
    /// Only this tool.
    pub tool: Option<String>,
}
