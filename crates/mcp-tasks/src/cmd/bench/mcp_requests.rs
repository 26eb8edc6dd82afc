//! The two requests the benchmark sends, as MCP 2026-07-28 bodies, and what
//! it reads from their answers: a `tools/call` of `counted_job` that becomes
//! a task, and a `tasks/get`.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::json;

/// The fixture tool both servers serve (`serve --tools fleet`, `rmcp-task-peer`).
pub(crate) const TOOL: &str = "counted_job";

/// How long a "live" task's tool works: longer than any benchmark, so it
/// stays `working` (queued, or holding an executor slot) while measured.
pub(crate) const LIVE_MS: u64 = 3_600_000;

/// A complete request body.
pub(crate) type Body = http_body_util::Full<hyper::body::Bytes>;

/// One request: its JSON-RPC method, the `Mcp-Name` header, the body.
#[derive(Debug, Clone)]
pub(crate) struct McpRequest {
    pub(crate) method: &'static str,
    pub(crate) name: String,
    pub(crate) body: Body,
}

/// Per-request metadata every 2026-07-28 request carries, declaring the tasks extension.
fn meta() -> serde_json::Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-tasks-bench", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// [`meta`] as JSON text, rendered once: the generator shares the cores
/// with the server it measures, so each request is a `format!` of fixed
/// text, not a JSON tree built and serialized again.
static META_JSON: LazyLock<String> = LazyLock::new(|| meta().to_string());

/// `tools/call counted_job {ms}`: a task whose tool works `ms` milliseconds.
pub(crate) fn create_task(id: u64, ms: u64) -> McpRequest {
    let meta = &*META_JSON;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{TOOL}","arguments":{{"ms":{ms}}},"_meta":{meta}}}}}"#
    );
    McpRequest { method: "tools/call", name: TOOL.to_owned(), body: Body::from(body) }
}

/// `tasks/get {taskId}`.
pub(crate) fn get_task(id: u64, task_id: &str) -> McpRequest {
    let (meta, quoted) = (&*META_JSON, serde_json::Value::from(task_id));
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/get","params":{{"taskId":{quoted},"_meta":{meta}}}}}"#);
    McpRequest { method: "tasks/get", name: task_id.to_owned(), body: Body::from(body) }
}

/// The fields of an answer the benchmark reads (either request's).
#[derive(Debug, Deserialize)]
struct Reply {
    result: Option<ReplyResult>,
    error: Option<ReplyError>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReplyResult {
    result_type: Option<String>,
    task_id: Option<String>,
    status: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ReplyError {
    code: i64,
    message: String,
}

/// What an answer said, or why it is not one the benchmark expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `tools/call` answered with a task handle.
    Created { task_id: String },
    /// `tasks/get` answered with the task's status.
    Status { status: String },
}

impl Answer {
    /// Reads an answer's body.
    pub(crate) fn parse(body: &[u8]) -> Result<Answer, String> {
        let reply: Reply = serde_json::from_slice(body).map_err(|e| {
            format!("not a JSON-RPC answer ({e}): {}", String::from_utf8_lossy(&body[..body.len().min(200)]))
        })?;
        if let Some(error) = reply.error {
            return Err(format!("JSON-RPC error {}: {}", error.code, error.message));
        }
        let result = reply.result.ok_or("an answer with neither result nor error")?;
        match (result.result_type.as_deref(), result.task_id, result.status) {
            (Some("task"), Some(task_id), _) => Ok(Answer::Created { task_id }),
            (_, _, Some(status)) => Ok(Answer::Status { status }),
            _ => Err("a result that is neither a task handle nor a task's status".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_handle_and_a_status_are_read_and_errors_are_named() {
        let created = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t1","status":"working"}}"#;
        assert_eq!(Answer::parse(created), Ok(Answer::Created { task_id: "t1".into() }));
        let status = br#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","taskId":"t1","status":"completed"}}"#;
        assert_eq!(Answer::parse(status), Ok(Answer::Status { status: "completed".into() }));
        let error = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown task"}}"#;
        assert_eq!(Answer::parse(error), Err("JSON-RPC error -32602: unknown task".into()));
        assert!(Answer::parse(b"<html>").unwrap_err().contains("not a JSON-RPC answer"));
    }

    /// The body as text is the JSON tree it stands for.
    async fn body_json(request: &McpRequest) -> serde_json::Value {
        use http_body_util::BodyExt;
        let bytes = request.body.clone().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).expect("a request body is JSON")
    }

    #[tokio::test]
    async fn bodies_rendered_from_text_are_the_requests_the_protocol_spells() {
        let create = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                            "params": {"name": TOOL, "arguments": {"ms": 250}, "_meta": meta()}});
        assert_eq!(body_json(&create_task(7, 250)).await, create);
        let get = json!({"jsonrpc": "2.0", "id": 8, "method": "tasks/get",
                         "params": {"taskId": "a\"b", "_meta": meta()}});
        assert_eq!(body_json(&get_task(8, "a\"b")).await, get, "a task id is quoted as a JSON string");
    }

    #[test]
    fn requests_name_their_method_and_target() {
        let create = create_task(7, 0);
        assert_eq!((create.method, create.name.as_str()), ("tools/call", TOOL));
        let get = get_task(8, "abc");
        assert_eq!((get.method, get.name.as_str()), ("tasks/get", "abc"));
    }
}
