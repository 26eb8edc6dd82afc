//! Checking a request body is a JSON-RPC message without building a tree
//! of its contents: one pass reads every value as rmcp will (numbers
//! included: one beyond the range of an `f64` is refused here, as rmcp
//! would refuse it with a bare HTTP 415), keeping nothing; another keeps the
//! top-level members as borrowed slices of the body ([`RawValue`]), so a
//! 1 MiB `arguments` is validated but never copied. rmcp parses the body
//! itself afterwards.

use std::collections::HashMap;

use rmcp::model::{CallToolRequestParams, CancelTaskParams, GetTaskParams, UpdateTaskParams};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What the checks learned about an acceptable message.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// The request's method (`None` for responses).
    pub method: Option<String>,
    /// The `taskId` of a `tasks/get`, `tasks/update` or `tasks/cancel`.
    pub task_id: Option<String>,
    /// The request's id (`null` for a notification or a response).
    pub id: Value,
}

/// Why a body was refused: a JSON-RPC error code and a message naming what
/// was wrong, and the request id to answer with when it could be read.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    /// `-32700`, `-32600` or `-32602`.
    pub code: i64,
    /// What was wrong.
    pub message: String,
    /// The request's id, when it was valid (`null` otherwise).
    pub id: Value,
    /// The method, for `-32602` (`error.data.method`).
    pub method: Option<String>,
}

/// JSON-RPC "parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "invalid request".
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC "invalid params".
pub const INVALID_PARAMS: i64 = -32602;

type Members<'a> = HashMap<String, &'a RawValue>;

/// Any JSON value read as rmcp reads it (every number as a number), kept
/// nowhere. (The fuzz target `jsonrpc_request` found the number rmcp
/// could not read that the member pass let through.)
struct Readable;

impl<'de> serde::Deserialize<'de> for Readable {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ReadableVisitor)
    }
}

struct ReadableVisitor;

impl<'de> serde::de::Visitor<'de> for ReadableVisitor {
    type Value = Readable;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_str<E>(self, _: &str) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_unit<E>(self) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Readable, A::Error> {
        while seq.next_element::<Readable>()?.is_some() {}
        Ok(Readable)
    }
    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Readable, M::Error> {
        while map.next_entry::<serde::de::IgnoredAny, Readable>()?.is_some() {}
        Ok(Readable)
    }
}

/// An object's members in order, duplicates kept, so that the check can
/// refuse them: JSON leaves a repeated name's meaning open and rmcp refuses
/// the message, so accepting it would hand rmcp a request it answers with a
/// generic error. (Found by the `jsonrpc_request` fuzz target.)
struct MemberList<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for MemberList<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = MemberList<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'a RawValue>()? {
                    members.push(member);
                }
                Ok(MemberList(members))
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

impl<'a> MemberList<'a> {
    /// The members by name, or the first name that appears twice.
    fn unique(self) -> Result<Members<'a>, String> {
        let mut members = Members::with_capacity(self.0.len());
        for (name, value) in self.0 {
            if members.contains_key(&name) {
                return Err(name);
            }
            members.insert(name, value);
        }
        Ok(members)
    }
}

/// Checks `body` is one JSON-RPC message with a valid envelope and, for the
/// methods this server implements, well-typed params.
pub fn check(body: &[u8]) -> Result<Checked, Refusal> {
    if let Err(e) = serde_json::from_slice::<Readable>(body)
        && e.classify() != serde_json::error::Category::Data
    {
        return Err(Refusal {
            code: PARSE_ERROR,
            message: format!("parse error: body is not JSON this server can read: {e}"),
            id: Value::Null,
            method: None,
        });
    }
    let members: MemberList<'_> = serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => invalid(Value::Null, "a JSON-RPC message must be a JSON object".to_owned()),
        _ => Refusal {
            code: PARSE_ERROR,
            message: format!("parse error: body is not valid JSON: {e}"),
            id: Value::Null,
            method: None,
        },
    })?;
    let members =
        members.unique().map_err(|name| invalid(Value::Null, format!("member {name:?} appears more than once")))?;
    let id = match members.get("id") {
        None => None,
        Some(raw) => Some(request_id(raw).ok_or_else(|| {
            invalid(Value::Null, format!("\"id\" must be a string or an integer (-2^63 to 2^63-1), not {}", kind(raw)))
        })?),
    };
    let answer_id = id.clone().unwrap_or(Value::Null);
    if members.get("jsonrpc").map(|raw| raw.get()) != Some("\"2.0\"") {
        return Err(invalid(answer_id, "\"jsonrpc\" must be \"2.0\"".to_owned()));
    }
    let method = match members.get("method") {
        Some(raw) => match serde_json::from_str::<String>(raw.get()) {
            Ok(method) => method,
            Err(_) => return Err(invalid(answer_id, format!("\"method\" must be a string, not {}", kind(raw)))),
        },
        // A response to a server request: rmcp's business.
        None if id.is_some() && (members.contains_key("result") || members.contains_key("error")) => {
            return Ok(Checked::default());
        }
        None => return Err(invalid(answer_id, "\"method\" is missing".to_owned())),
    };
    if id.is_none() {
        // A notification: nothing to answer.
        return Ok(Checked { method: Some(method), task_id: None, id: Value::Null });
    }
    let params = members.get("params").copied();
    let typed = match method.as_str() {
        "tasks/get" => task_params::<GetTaskParams>(params, |p| p.task_id),
        "tasks/cancel" => task_params::<CancelTaskParams>(params, |p| p.task_id),
        "tasks/update" => task_params::<UpdateTaskParams>(params, |p| p.task_id),
        "tools/call" => call_params(params).map(|()| None),
        _ => Ok(None),
    };
    match typed {
        Ok(task_id) => Ok(Checked { method: Some(method), task_id, id: answer_id }),
        Err(problem) => Err(Refusal {
            code: INVALID_PARAMS,
            message: format!("invalid params for {method}: {problem}"),
            id: answer_id,
            method: Some(method),
        }),
    }
}

/// Whether `text`, one JSON value, reads as rmcp reads it (every number
/// included): the first pass of [`check`], over a part of a body that was
/// otherwise only skipped (a borrowed raw value).
pub fn readable(text: &str) -> bool {
    serde_json::from_str::<Readable>(text).is_ok()
}

fn invalid(id: Value, problem: String) -> Refusal {
    Refusal { code: INVALID_REQUEST, message: format!("invalid request: {problem}"), id, method: None }
}

/// A request id as JSON, if it is one rmcp (and JSON-RPC) can answer: a
/// string or an integer that fits in 64 bits. `null`, booleans, objects,
/// arrays, fractions and larger integers are not.
fn request_id(raw: &RawValue) -> Option<Value> {
    let text = raw.get();
    if text.starts_with('"') {
        return serde_json::from_str::<String>(text).ok().map(Value::String);
    }
    serde_json::from_str::<i64>(text).ok().map(Value::from)
}

/// The JSON type of a raw value, in words.
fn kind(raw: &RawValue) -> &'static str {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        _ if text.contains(['.', 'e', 'E']) => "a fractional number",
        _ if serde_json::from_str::<i64>(text).is_err() => "an integer beyond 64 bits",
        _ => "a number",
    }
}

fn task_params<T: serde::de::DeserializeOwned>(
    params: Option<&RawValue>,
    task_id: impl FnOnce(T) -> String,
) -> Result<Option<String>, String> {
    let params = params.filter(|p| p.get() != "null").ok_or_else(|| "params are missing".to_owned())?;
    serde_json::from_str::<T>(params.get()).map(|p| Some(task_id(p))).map_err(|e| e.to_string())
}

/// `tools/call` params, checked without building a tree of the arguments:
/// they must be an object (or absent), and everything else must have the
/// right type.
fn call_params(params: Option<&RawValue>) -> Result<(), String> {
    let params = params.filter(|p| p.get() != "null").ok_or_else(|| "params are missing".to_owned())?;
    let mut members = serde_json::from_str::<MemberList<'_>>(params.get())
        .map_err(|e| e.to_string())?
        .unique()
        .map_err(|name| format!("member {name:?} appears more than once"))?;
    if let Some(arguments) = members.remove("arguments")
        && !matches!(arguments.get().as_bytes().first(), Some(b'{' | b'n'))
    {
        return Err(format!("\"arguments\" must be an object, not {}", kind(arguments)));
    }
    let mut rest = Map::new();
    for (key, raw) in members {
        rest.insert(key, serde_json::from_str(raw.get()).map_err(|e| e.to_string())?);
    }
    serde_json::from_value::<CallToolRequestParams>(Value::Object(rest)).map(drop).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> (i64, String) {
        let r = check(body.as_bytes()).unwrap_err();
        (r.code, r.message)
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        assert_eq!(refused("{\"jsonrpc\":").0, PARSE_ERROR);
    }

    #[test]
    fn non_objects_and_bad_versions_are_invalid_requests() {
        assert_eq!(refused("[1,2]").0, INVALID_REQUEST);
        assert_eq!(refused(r#"{"id":1,"method":"tools/list"}"#).0, INVALID_REQUEST);
    }

    #[test]
    fn ids_must_be_strings_or_64_bit_integers() {
        for (id, words) in [
            ("null", "null"),
            ("true", "a boolean"),
            ("{}", "an object"),
            ("1.5", "a fractional number"),
            ("1180591620717411303424", "beyond 64 bits"),
        ] {
            let (code, message) = refused(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#));
            assert_eq!(code, INVALID_REQUEST, "{id}");
            assert!(message.contains("\"id\"") && message.contains(words), "{id}: {message}");
        }
        assert!(check(br#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"tools/list"}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#).is_ok());
    }

    #[test]
    fn the_method_must_be_a_present_string() {
        let (code, message) = refused(r#"{"jsonrpc":"2.0","id":1,"params":{}}"#);
        assert_eq!(code, INVALID_REQUEST);
        assert!(message.contains("\"method\" is missing"), "{message}");
        let (code, message) = refused(r#"{"jsonrpc":"2.0","id":1,"method":42}"#);
        assert_eq!(code, INVALID_REQUEST);
        assert!(message.contains("\"method\" must be a string"), "{message}");
    }

    #[test]
    fn a_numeric_task_id_is_invalid_params_naming_the_field() {
        let r = check(br#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":42}}"#).unwrap_err();
        assert_eq!((r.code, r.id), (INVALID_PARAMS, Value::from(7)));
        assert!(r.message.contains("tasks/get") && r.message.contains("integer"), "{}", r.message);
    }

    #[test]
    fn tool_arguments_must_be_an_object() {
        let (code, message) =
            refused(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#);
        assert_eq!(code, INVALID_PARAMS);
        assert!(message.contains("arguments") && message.contains("array"), "{message}");
        assert_eq!(refused(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#).0, INVALID_PARAMS);
    }

    #[test]
    fn a_number_rmcp_cannot_read_is_a_parse_error() {
        let body = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","arguments":{"n":1e999}}}"#;
        let (code, message) = refused(body);
        assert_eq!(code, PARSE_ERROR);
        assert!(message.contains("number out of range"), "{message}");
        assert!(
            check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","arguments":{"n":1e308}}}"#)
                .is_ok()
        );
    }

    #[test]
    fn a_repeated_member_is_refused_naming_it() {
        let (code, message) = refused(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","id":5}"#);
        assert_eq!(code, INVALID_REQUEST);
        assert!(message.contains("\"id\" appears more than once"), "{message}");
        let r = check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a","name":"b"}}"#).unwrap_err();
        assert_eq!((r.code, r.id), (INVALID_PARAMS, Value::from(4)));
        assert!(r.message.contains("\"name\" appears more than once"), "{}", r.message);
    }

    #[test]
    fn well_typed_messages_pass_and_say_their_task() {
        let ok = check(br#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"x"}}"#).unwrap();
        assert_eq!(ok.task_id.as_deref(), Some("x"));
        assert!(check(br#"{"jsonrpc":"2.0","id":7,"method":"unknown/thing","params":{}}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).is_ok());
        assert!(
            check(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":2}]}}}"#)
                .is_ok()
        );
    }
}
