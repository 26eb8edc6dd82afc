//! A `tasks/get` answer serialized from borrowed parts, to the bytes rmcp's
//! own message serializes to. rmcp's `DetailedTask` serializes through an
//! owned copy of itself (its wire helper takes its fields by value), a deep
//! copy of every completed task's result on every poll. The differential
//! test (`tests/fast_get_differential.rs`) holds the two to the same bytes
//! for every status. A completed task's result may be the stored JSON text,
//! written as it is, never decoded.

use rmcp::model::{
    GetTaskResult, InputRequests, JsonObject, JsonRpcVersion2_0, MetaObject, RequestId, ResultType, Task, TaskPayload,
};
use serde::Serialize;
use serde_json::value::RawValue;

/// The JSON-RPC response carrying a [`GetTaskResult`], field for field as
/// rmcp's `JsonRpcResponse` writes it.
#[derive(Serialize)]
pub(crate) struct GetAnswer<'a> {
    jsonrpc: JsonRpcVersion2_0,
    id: &'a RequestId,
    result: GetTaskResultRef<'a>,
}

/// rmcp's `GetTaskResult` with its `DetailedTask` flattened as rmcp's wire
/// helper flattens it: the base task, then the status's payload member.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GetTaskResultRef<'a> {
    result_type: &'a ResultType,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a MetaObject>,
    #[serde(flatten)]
    task: &'a Task,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_requests: Option<&'a InputRequests>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<ResultMember<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a JsonObject>,
}

/// A completed task's result: the answer's object, or the stored JSON text
/// of one, written as it is (it was written by serde from a JSON value, so
/// its bytes are the ones the decoded object would serialize to).
#[derive(Serialize)]
#[serde(untagged)]
enum ResultMember<'a> {
    Object(&'a JsonObject),
    Text(&'a RawValue),
}

impl<'a> GetAnswer<'a> {
    /// The response to request `id` with `answer`, whose completed result is
    /// `result_text` when given (its own result object is then a
    /// placeholder; see `DurableTasks::answer_get_unparsed`), or `None` for
    /// a payload this build does not know (rmcp's enum may grow): the caller
    /// then serializes rmcp's own message.
    pub(crate) fn new(id: &'a RequestId, answer: &'a GetTaskResult, result_text: Option<&'a RawValue>) -> Option<Self> {
        let (input_requests, result, error) = match &answer.task.payload {
            TaskPayload::Working | TaskPayload::Cancelled => (None, None, None),
            TaskPayload::InputRequired { input_requests } => (Some(input_requests), None, None),
            TaskPayload::Completed { result } => {
                let member = result_text.map_or(ResultMember::Object(result), ResultMember::Text);
                (None, Some(member), None)
            }
            TaskPayload::Failed { error } => (None, None, Some(error)),
            _ => return None,
        };
        let result = GetTaskResultRef {
            result_type: &answer.result_type,
            meta: answer.meta.as_ref(),
            task: &answer.task.task,
            input_requests,
            result,
            error,
        };
        Some(GetAnswer { jsonrpc: JsonRpcVersion2_0, id, result })
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{NumberOrString, ServerJsonRpcMessage, ServerResult, TaskStatus};
    use serde_json::json;

    use super::*;

    fn object(v: serde_json::Value) -> JsonObject {
        v.as_object().expect("an object").clone()
    }

    /// Each payload, with and without `_meta` and a status message: the
    /// borrowed form writes exactly rmcp's bytes.
    #[test]
    fn writes_the_bytes_rmcp_writes() {
        let mut task = Task::new("t-1", TaskStatus::Working, "2026-12-07T00:00:00Z", "2026-12-07T00:00:01Z")
            .with_ttl_ms(60_000)
            .with_poll_interval_ms(500);
        let payloads = [
            TaskPayload::Working,
            TaskPayload::Cancelled,
            TaskPayload::Completed {
                result: object(json!({"content": [{"type": "text", "text": "a \"quoted\" é"}], "isError": false})),
            },
            TaskPayload::Failed { error: object(json!({"code": -32603, "message": "boom"})) },
            TaskPayload::InputRequired {
                input_requests: serde_json::from_value(json!({
                    "ask": {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}
                }))
                .expect("an input request"),
            },
        ];
        for (n, payload) in payloads.into_iter().enumerate() {
            task = if n % 2 == 0 { task.with_status_message("busy") } else { task };
            let mut answer = GetTaskResult::new(rmcp::model::DetailedTask::new(task.clone(), payload));
            if n % 3 != 0 {
                answer.meta = Some(serde_json::from_value(json!({"k": n})).expect("meta"));
            }
            let id = NumberOrString::Number(n as i64);
            let ours = serde_json::to_string(&GetAnswer::new(&id, &answer, None).expect("a known payload")).expect("ours");
            let theirs = serde_json::to_string(&ServerJsonRpcMessage::response(ServerResult::GetTaskResult(answer), id))
                .expect("rmcp's");
            assert_eq!(ours, theirs, "payload {n}");
        }
    }

    /// A completed result given as the text serde wrote for it goes out in
    /// the bytes its decoded object would, in place of the placeholder.
    #[test]
    fn a_result_kept_as_text_writes_the_bytes_of_its_object() {
        let stored = json!({"content": [{"type": "text", "text": "é \"q\" \u{1}", "n": 1.5e300}], "isError": false});
        let task = Task::new("t-2", TaskStatus::Completed, "2026-12-07T00:00:00Z", "2026-12-07T00:00:01Z");
        let placeholder = GetTaskResult::new(rmcp::model::DetailedTask::new(
            task.clone(),
            TaskPayload::Completed { result: object(json!({"content": []})) },
        ));
        let text = RawValue::from_string(serde_json::to_string(&stored).unwrap()).unwrap();
        let id = NumberOrString::String("a".into());
        let ours = serde_json::to_string(&GetAnswer::new(&id, &placeholder, Some(&text)).unwrap()).unwrap();
        let decoded =
            GetTaskResult::new(rmcp::model::DetailedTask::new(task, TaskPayload::Completed { result: object(stored) }));
        let theirs =
            serde_json::to_string(&ServerJsonRpcMessage::response(ServerResult::GetTaskResult(decoded), id)).unwrap();
        assert_eq!(ours, theirs);
        assert!(!ours.contains(r#""content":[]"#), "the placeholder is not written: {ours}");
    }
}
