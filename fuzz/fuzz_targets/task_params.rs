//! The task parameters: what a client reads from a server's task answer
//! (`ttlMs`, `pollIntervalMs`, the orphan window in `_meta`, through
//! `mcp_tasks_wire::server_hints`) into the core's pacing, and the
//! `tools/call` params whose name and arguments fingerprint an idempotent call.
//!
//! Properties: no panic; a parsed answer serializes and parses back to
//! the same task and hints; the status maps to the core and back unchanged; whatever the
//! hints, every delay the client's pacer draws is a non-negative number
//! and, when a window is advertised, at most half of it (the client can
//! never be reaped by its own pacing); the call fingerprint is 64 hex digits
//! and the same for the arguments written out and read back (integers and
//! strings: serde_json does not promise every float reads back exactly),
//! and a different tool gives a different one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_tasks_core::poll::{ORPHAN_WINDOW_SHARE, PollPolicy};
use mcp_tasks_core::{Pacer, PacingMode, PyRandom, ServerHints, call_fingerprint};
use mcp_tasks_wire::{ORPHAN_WINDOW_META_KEY, core_status, server_hints, wire_status};
use rmcp::model::{CallToolRequestParams, CreateTaskResult, GetTaskResult, MetaObject, Task};
use serde_json::Value;

/// Written out and read back, `value` gives the same task fields and hints.
/// (Compared on what mcp-tasks reads, not on arbitrary JSON in `_meta` or a
/// result: serde_json does not promise that every float reads back
/// bit-for-bit, e.g. an integer beyond 64 bits.)
fn round_trips<T>(value: &T, task: impl Fn(&T) -> (&Task, Option<&MetaObject>))
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let text = serde_json::to_string(value).expect("a parsed answer serializes");
    let again: T = serde_json::from_str(&text).expect("a serialized answer parses");
    let ((before, before_meta), (after, after_meta)) = (task(value), task(&again));
    assert_eq!(after, before, "{text}");
    let (hints_before, hints_after) = (server_hints(before, before_meta), server_hints(after, after_meta));
    assert_eq!((hints_after.poll_interval_ms, hints_after.ttl_ms), (hints_before.poll_interval_ms, hints_before.ttl_ms));
    if exact_window(before_meta) {
        assert_eq!(hints_after.orphan_window_ms, hints_before.orphan_window_ms, "{text}");
    }
}

/// Whether the advertised window, if any, is a plain integer (which reads back exactly).
fn exact_window(meta: Option<&MetaObject>) -> bool {
    meta.and_then(|m| m.0.get(ORPHAN_WINDOW_META_KEY)).is_none_or(|v| v.as_u64().is_some() || !v.is_number())
}

/// Whether `value` holds a number that is not an integer.
fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(members) => members.values().any(has_float),
        _ => false,
    }
}

fn paces_within_the_window(task: &Task, meta: Option<&MetaObject>, seed: u64) {
    let hints: ServerHints = server_hints(task, meta);
    assert_eq!(hints.poll_interval_ms, task.poll_interval_ms);
    assert_eq!(hints.ttl_ms, task.ttl_ms);
    assert_eq!(core_status(wire_status(core_status(task.status))), core_status(task.status));
    for mode in [PacingMode::HintPaced, PacingMode::HintAsFloor] {
        let mut pacer = Pacer::new(mode, PollPolicy::default(), PyRandom::new(seed));
        pacer.observe(hints);
        let ceiling = hints.ceiling_window_ms().map(|w| w as f64 * ORPHAN_WINDOW_SHARE);
        for _ in 0..8 {
            let delay = pacer.next_delay_ms();
            assert!(delay >= 0.0 && !delay.is_nan(), "{mode}: {delay} for {hints:?}");
            if let Some(ceiling) = ceiling {
                assert!(delay <= ceiling * (1.0 + 1e-12), "{mode}: {delay} ms beyond half the window, {hints:?}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    let seed = data.len() as u64;
    if let Ok(created) = serde_json::from_value::<CreateTaskResult>(value.clone()) {
        round_trips(&created, |c: &CreateTaskResult| (&c.task, c.meta.as_ref()));
        paces_within_the_window(&created.task, created.meta.as_ref(), seed);
    }
    if let Ok(got) = serde_json::from_value::<GetTaskResult>(value.clone()) {
        round_trips(&got, |g: &GetTaskResult| (&g.task.task, g.meta.as_ref()));
        paces_within_the_window(&got.task.task, got.meta.as_ref(), seed);
    }
    if let Ok(call) = serde_json::from_value::<CallToolRequestParams>(value) {
        let again: CallToolRequestParams = serde_json::from_str(&serde_json::to_string(&call).unwrap()).unwrap();
        assert_eq!(again.name, call.name);
        let arguments = Value::Object(call.arguments.clone().unwrap_or_default());
        let fingerprint = call_fingerprint(&call.name, &arguments);
        assert_eq!(fingerprint.len(), 64);
        assert!(fingerprint.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(call_fingerprint(&format!("{}.", call.name), &arguments), fingerprint, "the tool counts");
        if !has_float(&arguments) {
            let reread: Value = serde_json::from_str(&arguments.to_string()).unwrap();
            assert_eq!(call_fingerprint(&call.name, &reread), fingerprint, "the fingerprint depends on the text");
        }
    }
});
