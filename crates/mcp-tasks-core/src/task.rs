//! The durable task record: everything a store keeps about one task.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::status::TaskStatus;
use crate::time::Timestamp;

/// A task's id: a UUID whose random bits come from the operating system, so
/// an id cannot be guessed from another (122 random bits from
/// [`random`](Self::random), 74 after a creation instant from
/// [`minted_at`](Self::minted_at)).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(pub String);

impl TaskId {
    /// A fresh random id. The core's only read of OS entropy: it mints a
    /// name and decides nothing (see `tests/sans_io.rs`).
    pub fn random() -> Self {
        TaskId(Self::random_bytes().to_string())
    }

    /// A fresh id that sorts by `at` (a UUID v7: 48 bits of milliseconds,
    /// then 74 random bits (of 80 drawn) from [`random`](Self::random)'s source). Stores
    /// index tasks by id, so ids minted in creation order append to that
    /// index instead of splitting pages all over it, and recent tasks, the
    /// ones clients poll, share its pages.
    pub fn minted_at(at: Timestamp) -> Self {
        let random = *Self::random_bytes().as_bytes();
        // Bytes 6 and 8 of a v4 hold its version and variant bits: skip them.
        let mut bits = [0u8; 10];
        bits[..6].copy_from_slice(&random[..6]);
        bits[6..].copy_from_slice(&random[9..13]);
        let millis = u64::try_from(at.as_millis()).unwrap_or(0);
        TaskId(uuid::Builder::from_unix_timestamp_millis(millis, &bits).into_uuid().to_string())
    }

    /// The core's one read of OS entropy (a UUID v4).
    fn random_bytes() -> uuid::Uuid {
        uuid::Uuid::new_v4()
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for TaskId {
    fn from(s: &str) -> Self {
        TaskId(s.to_owned())
    }
}

/// A JSON-RPC error object, as a `failed` task reports it (`{code, message, data?}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskError {
    /// JSON-RPC error code.
    pub code: i64,
    /// Human-readable message.
    pub message: String,
    /// Optional structured detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl TaskError {
    /// JSON-RPC "internal error", the code for a tool that failed.
    pub const INTERNAL: i64 = -32603;

    /// An internal error (-32603) with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        TaskError { code: Self::INTERNAL, message: message.into(), data: None }
    }

    /// Adds structured detail.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// Server-to-client requests a task is waiting on, by server-chosen key
/// (`{method, params}` objects: `elicitation/create`, `sampling/createMessage`, …).
pub type InputRequests = BTreeMap<String, Value>;

/// The client's answers, by the same keys.
pub type InputResponses = BTreeMap<String, Value>;

/// The lease an executor holds while it runs a task's handler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// Which executor holds it (unique per process start).
    pub owner: String,
    /// When it lapses unless renewed; a lapsed lease means the executor died.
    pub expires_at: Timestamp,
}

/// Everything a store keeps about one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task's id.
    pub id: TaskId,
    /// Bumped by every change a store makes, except poll timestamps; guards
    /// compare-and-set updates so a sweep never acts on a stale read.
    pub version: i64,
    /// The tool that runs it.
    pub tool: String,
    /// The tool's arguments.
    pub arguments: Value,
    /// Who created it (the authenticated principal), if anyone.
    pub principal: Option<String>,
    /// Current status.
    pub status: TaskStatus,
    /// Latest human-readable status message.
    pub status_message: Option<String>,
    /// The attempt now running or next to run, starting at 1.
    pub attempt: u32,
    /// The attempt ceiling that applies to this task.
    pub max_attempts: u32,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed (status, message, attempt, payload).
    pub updated_at: Timestamp,
    /// When it must be terminal by (creation + maximum execution time).
    pub deadline_at: Timestamp,
    /// When it may next be claimed to run (now, or later after a retry delay).
    pub run_at: Option<Timestamp>,
    /// The lease of the executor running it, if one is.
    pub lease: Option<Lease>,
    /// When a client last polled it (flushed in batches; see the store docs).
    pub last_polled_at: Option<Timestamp>,
    /// Whether a client asked to cancel it (acknowledged, not yet honoured).
    pub cancel_requested: bool,
    /// When it reached a terminal status.
    pub terminal_at: Option<Timestamp>,
    /// When the expiry sweep may delete it (set once terminal).
    pub expires_at: Option<Timestamp>,
    /// The tool result (`CallToolResult` JSON), once completed.
    pub result: Option<Value>,
    /// The JSON-RPC error, once failed.
    pub error: Option<TaskError>,
    /// Outstanding and past input requests, by key.
    pub input_requests: InputRequests,
    /// Answers received so far, by key.
    pub input_responses: InputResponses,
    /// The creator's idempotency key, if it gave one.
    pub idempotency_key: Option<String>,
    /// Fingerprint of tool + arguments, bound to the idempotency key.
    pub fingerprint: String,
    /// The W3C `traceparent` every attempt's span is a child of, fixed at
    /// creation (the creating request's span, or the client's own trace
    /// context), so a task's attempts on any instance form one trace.
    #[serde(default)]
    pub trace_parent: Option<String>,
}

impl TaskRecord {
    /// A task as a store first writes it: `working`, attempt 1 of
    /// `max_attempts`, due at once, unleased, version 1, nothing asked or
    /// answered. Useful to show a decision on a record.
    pub fn queued(
        id: TaskId,
        tool: impl Into<String>,
        arguments: Value,
        created_at: Timestamp,
        deadline_at: Timestamp,
        max_attempts: u32,
    ) -> TaskRecord {
        let tool = tool.into();
        TaskRecord {
            id,
            version: 1,
            fingerprint: crate::fingerprint::call_fingerprint(&tool, &arguments),
            tool,
            arguments,
            principal: None,
            status: TaskStatus::Working,
            status_message: None,
            attempt: 1,
            max_attempts,
            created_at,
            updated_at: created_at,
            deadline_at,
            run_at: Some(created_at),
            lease: None,
            last_polled_at: None,
            cancel_requested: false,
            terminal_at: None,
            expires_at: None,
            result: None,
            error: None,
            input_requests: InputRequests::new(),
            input_responses: InputResponses::new(),
            idempotency_key: None,
            trace_parent: None,
        }
    }

    /// Input requests that have no answer yet.
    pub fn pending_input(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.input_requests.iter().filter(|(k, _)| !self.input_responses.contains_key(*k))
    }

    /// The instant silence is measured from for orphan detection: the last
    /// poll, or creation if never polled.
    pub fn last_seen_at(&self) -> Timestamp {
        self.last_polled_at.map_or(self.created_at, |p| p.max(self.created_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_sort_by_their_instant_and_stay_random() {
        let early = TaskId::minted_at(Timestamp::from_millis(1_800_000_000_000));
        let late = TaskId::minted_at(Timestamp::from_millis(1_800_000_000_001));
        let twin = TaskId::minted_at(Timestamp::from_millis(1_800_000_000_000));
        assert!(early < late && twin < late, "{early} {twin} {late}");
        assert_ne!(early, twin, "the same millisecond, other random bits");
        assert_eq!(early.as_str().len(), 36);
        let uuid = uuid::Uuid::parse_str(early.as_str()).unwrap();
        assert_eq!(uuid.get_version_num(), 7);
        assert_eq!(&early.as_str()[..13], "01a3185c-5000", "48 bits of milliseconds first");
    }

    #[test]
    fn ids_are_random_and_long() {
        let a = TaskId::random();
        let b = TaskId::random();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 36);
    }
}
