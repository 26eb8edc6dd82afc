//! Runtime errors in the protocol's terms.

use mcp_tasks_runtime::RuntimeError;
use rmcp::ErrorData as McpError;
use rmcp::model::ClientCapabilities;
use serde_json::json;

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
        other => McpError::internal_error(other.to_string(), None),
    }
}

/// `-32021` naming the tasks extension: the call can only run as a task and
/// the client did not declare it can take one.
pub(crate) fn tasks_required() -> McpError {
    McpError::missing_required_client_capability(ClientCapabilities::builder().enable_tasks().build())
}
