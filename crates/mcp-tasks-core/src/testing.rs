//! Small builders for tests of this crate and its dependents.

use crate::status::TaskStatus;
use crate::task::{TaskId, TaskRecord};
use crate::time::Timestamp;

/// A task of `status` created at `created_s` seconds, attempt 1 of 3, with the
/// default 1800 s deadline and nothing else set.
pub fn record(status: TaskStatus, created_s: i64) -> TaskRecord {
    let created = Timestamp::from_secs(created_s);
    TaskRecord {
        id: TaskId::random(),
        version: 1,
        tool: "long_running_report".into(),
        arguments: serde_json::json!({}),
        principal: None,
        status,
        status_message: None,
        attempt: 1,
        max_attempts: 3,
        created_at: created,
        updated_at: created,
        deadline_at: Timestamp::from_secs(created_s + 1800),
        run_at: None,
        lease: None,
        last_polled_at: None,
        cancel_requested: false,
        terminal_at: status.is_terminal().then_some(created),
        expires_at: None,
        result: None,
        error: None,
        input_requests: Default::default(),
        input_responses: Default::default(),
        idempotency_key: None,
        trace_parent: None,
        fingerprint: String::new(),
    }
}
