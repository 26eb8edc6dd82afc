//! The wire facts an mcp-tasks server and client must agree on, defined
//! once: the vendor `_meta` key that carries the orphan window, the
//! idempotency key of a `tools/call` and the capability that promises it is
//! honoured, and the mapping between the core's task statuses and rmcp's.
//!
//! The core has no MCP wire types, so this small crate sits between it and
//! rmcp; the server writes with it and the client reads with it.
//!
//! [`envelope`] is what a request body must be for the server to take it
//! (a JSON-RPC message with well-typed params for the tasks methods and
//! `tools/call`): the server's guard runs it, and it lives here, beside
//! nothing but rmcp's types, so it can be fuzzed without a server (`fuzz/`).
//!
//! ```
//! use mcp_tasks_core::TaskStatus;
//! use mcp_tasks_wire::{core_status, orphan_window_meta, orphan_window_ms, wire_status};
//!
//! assert_eq!(core_status(wire_status(TaskStatus::InputRequired)), TaskStatus::InputRequired);
//! assert_eq!(orphan_window_ms(Some(&orphan_window_meta(900_000))), Some(900_000));
//! ```

pub mod envelope;
mod task_support;

pub use task_support::{TASK_SUPPORT_META_KEY, TaskSupport};

use mcp_tasks_core::{ServerHints, TaskStatus};
use rmcp::model::{JsonObject, MetaObject, ServerCapabilities, Task, TaskStatus as WireStatus};
use serde_json::Value;

/// The `_meta` key, on every task result an mcp-tasks server sends, whose
/// value is the server's orphan window in milliseconds: a task nobody polls
/// for this long is presumed abandoned and cancelled. A vendor key (its own
/// reverse-DNS prefix), since `io.modelcontextprotocol/` is reserved for MCP
/// itself. Clients should poll at least twice per window.
pub const ORPHAN_WINDOW_META_KEY: &str = "dev.mcp-tasks/orphanWindowMs";

/// The `_meta` key under which a client sends an idempotency key with a
/// `tools/call`: an mcp-tasks server answers the same key and call of a
/// durable tool with the same task, so a call whose answer was lost can be
/// sent again. Also the name of the `experimental` server capability that
/// lists the tools for which this holds.
pub const IDEMPOTENCY_KEY_META_KEY: &str = "dev.mcp-tasks/idempotencyKey";

/// The JSON type of `value`, in words, as an error message names what it
/// got ("a number", "null").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Declares, in `capabilities.experimental`, that calls of `tools` honour
/// [`IDEMPOTENCY_KEY_META_KEY`] (`{"tools": [...]}`): a vendor capability,
/// so the `tasks` extension's own settings stay as the specification writes
/// them. Only durable tools are listed: a server's other tools run again
/// when a call is repeated.
pub fn advertise_idempotent_calls<'a>(capabilities: &mut ServerCapabilities, tools: impl IntoIterator<Item = &'a str>) {
    let names: Vec<Value> = tools.into_iter().map(|t| Value::from(t.to_owned())).collect();
    let mut settings = JsonObject::new();
    settings.insert("tools".to_owned(), Value::Array(names));
    capabilities.experimental.get_or_insert_with(Default::default).insert(IDEMPOTENCY_KEY_META_KEY.to_owned(), settings);
}

/// Whether a server's capabilities promise that a repeated keyed
/// `tools/call` of `tool` returns the task the first one created.
pub fn honours_idempotent_calls(capabilities: &ServerCapabilities, tool: &str) -> bool {
    capabilities
        .experimental
        .as_ref()
        .and_then(|e| e.get(IDEMPOTENCY_KEY_META_KEY))
        .and_then(|settings| settings.get("tools"))
        .and_then(Value::as_array)
        .is_some_and(|tools| tools.iter().any(|t| t.as_str() == Some(tool)))
}

/// The wire status for a core status.
pub fn wire_status(status: TaskStatus) -> WireStatus {
    match status {
        TaskStatus::Working => WireStatus::Working,
        TaskStatus::InputRequired => WireStatus::InputRequired,
        TaskStatus::Completed => WireStatus::Completed,
        TaskStatus::Failed => WireStatus::Failed,
        TaskStatus::Cancelled => WireStatus::Cancelled,
    }
}

/// The core status for a wire status. A status a later protocol adds reads
/// as `working`: it is not terminal, so a client keeps polling.
pub fn core_status(status: WireStatus) -> TaskStatus {
    #[allow(unreachable_patterns)] // rmcp's enum may grow
    match status {
        WireStatus::Working => TaskStatus::Working,
        WireStatus::InputRequired => TaskStatus::InputRequired,
        WireStatus::Completed => TaskStatus::Completed,
        WireStatus::Failed => TaskStatus::Failed,
        WireStatus::Cancelled => TaskStatus::Cancelled,
        _ => TaskStatus::Working,
    }
}

/// `_meta` advertising an orphan window of `window_ms`.
pub fn orphan_window_meta(window_ms: u64) -> MetaObject {
    let mut meta = JsonObject::new();
    meta.insert(ORPHAN_WINDOW_META_KEY.to_owned(), Value::from(window_ms));
    MetaObject(meta)
}

/// The orphan window a result's `_meta` advertises, ms. An integer or a
/// positive float is accepted (JSON producers differ); anything else is ignored.
pub fn orphan_window_ms(meta: Option<&MetaObject>) -> Option<u64> {
    let v = meta?.0.get(ORPHAN_WINDOW_META_KEY)?;
    v.as_u64().or_else(|| v.as_f64().filter(|f| f.is_finite() && *f > 0.0).map(|f| f as u64))
}

/// The hints a server gives with a task: `pollIntervalMs`, `ttlMs`, and the
/// orphan window from the `_meta` of the result carrying it.
pub fn server_hints(task: &Task, meta: Option<&MetaObject>) -> ServerHints {
    ServerHints { poll_interval_ms: task.poll_interval_ms, ttl_ms: task.ttl_ms, orphan_window_ms: orphan_window_ms(meta) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tasks_core::status::ALL_STATUSES;

    #[test]
    fn statuses_round_trip_and_keep_their_names() {
        for s in ALL_STATUSES {
            assert_eq!(core_status(wire_status(s)), s);
            assert_eq!(serde_json::to_value(wire_status(s)).unwrap(), serde_json::json!(s.as_str()));
        }
    }

    #[test]
    fn the_vendor_key_is_not_under_a_reserved_prefix() {
        let prefix = ORPHAN_WINDOW_META_KEY.split('/').next().unwrap();
        let labels: Vec<&str> = prefix.split('.').collect();
        assert!(labels.len() >= 2);
        assert!(!["modelcontextprotocol", "mcp"].contains(&labels[1]), "{prefix}");
    }

    #[test]
    fn the_idempotency_capability_reads_back() {
        let mut caps = ServerCapabilities::default();
        assert!(!honours_idempotent_calls(&caps, "report"));
        advertise_idempotent_calls(&mut caps, ["report", "export"]);
        assert!(honours_idempotent_calls(&caps, "report"));
        assert!(!honours_idempotent_calls(&caps, "echo"), "a tool not listed runs again when repeated");
        let wire = serde_json::to_value(&caps).unwrap();
        assert_eq!(wire["experimental"][IDEMPOTENCY_KEY_META_KEY], serde_json::json!({"tools": ["report", "export"]}));
    }

    #[test]
    fn the_window_reads_back_leniently() {
        let mut m = MetaObject::new();
        m.0.insert(ORPHAN_WINDOW_META_KEY.to_owned(), serde_json::json!(2500.0));
        assert_eq!(orphan_window_ms(Some(&m)), Some(2500));
        m.0.insert(ORPHAN_WINDOW_META_KEY.to_owned(), serde_json::json!("soon"));
        assert_eq!(orphan_window_ms(Some(&m)), None);
        assert_eq!(orphan_window_ms(None), None);
    }
}
