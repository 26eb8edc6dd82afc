//! Runtime errors in the protocol's terms.

use mcp_tasks_runtime::{RuntimeError, SchemaViolation};
use mcp_tasks_store::StoreError;
use rmcp::ErrorData as McpError;
use rmcp::model::ClientCapabilities;
use rmcp::model::ErrorCode;
use serde_json::json;

/// `-32050`: the caller's principal has reached its quota of stored tasks
/// (or bytes of arguments); nothing was created. An implementation-defined
/// server error code (JSON-RPC reserves -32000..-32099 for those).
pub const QUOTA_EXCEEDED: ErrorCode = ErrorCode(-32050);

/// The JSON-RPC error a client gets for a runtime error.
pub(crate) fn to_mcp(e: RuntimeError) -> McpError {
    match e {
        // Unknown, expired and someone else's task all read the same, so ids
        // cannot be probed.
        RuntimeError::TaskNotFound(id) => McpError::invalid_params(
            format!("unknown task id \"{id}\": no such task, it has expired, or it is not yours"),
            Some(json!({"taskId": id.as_str()})),
        ),
        RuntimeError::UnknownTool { tool, .. } => {
            McpError::invalid_params(format!("unknown tool \"{tool}\""), Some(json!({"tool": tool})))
        }
        RuntimeError::IdempotencyConflict { .. } => McpError::invalid_params(e.to_string(), None),
        RuntimeError::Store(StoreError::QuotaExceeded { ref principal, resource, used, limit }) => McpError::new(
            QUOTA_EXCEEDED,
            e.to_string(),
            Some(json!({"principal": principal, "resource": resource, "used": used, "limit": limit})),
        ),
        // Nothing was queued or stored: the message names the field and what was expected.
        RuntimeError::InvalidArguments { ref tool, ref violations } => {
            let data = json!({"tool": tool, "errors": violations_json(violations)});
            McpError::invalid_params(e.to_string(), Some(data))
        }
        RuntimeError::InvalidAnswer { ref key, ref violations } => {
            let data = json!({"inputKey": key, "errors": violations_json(violations)});
            McpError::invalid_params(e.to_string(), Some(data))
        }
        other => McpError::internal_error(other.to_string(), None),
    }
}

/// Each violation as `{"pointer", "expected"}`.
fn violations_json(violations: &[SchemaViolation]) -> serde_json::Value {
    violations.iter().map(|v| json!({"pointer": v.pointer, "expected": v.expected})).collect()
}

/// `-32021` naming the tasks extension: the call can only run as a task and
/// the client did not declare it can take one.
pub(crate) fn tasks_required() -> McpError {
    McpError::missing_required_client_capability(ClientCapabilities::builder().enable_tasks().build())
}
