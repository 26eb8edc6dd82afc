//! The front layer in front of rmcp's Streamable HTTP service. It answers,
//! with the specification's errors, what rmcp alone would answer wrongly or
//! not at all, and lets everything else through untouched:
//!
//! - a missing or unknown bearer token (when tokens are configured): HTTP 401;
//! - a body over the configured limit: HTTP 413 with a JSON-RPC error;
//! - malformed JSON: HTTP 400, `-32700` (rmcp answers 415 in plain text);
//! - JSON that is not a JSON-RPC message: HTTP 400, `-32600`;
//! - wrong-typed params of the methods this server implements, such as a
//!   numeric `taskId`: HTTP 400, `-32602` naming the field (rmcp answers
//!   `-32601`, since the typed request does not parse).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{CallToolRequestParams, CancelTaskParams, GetTaskParams, UpdateTaskParams};
use serde_json::{Value, json};

use crate::auth::TokenMap;

/// JSON-RPC "parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "invalid request".
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC "invalid params".
pub const INVALID_PARAMS: i64 = -32602;

/// What the front layer enforces.
#[derive(Debug, Clone)]
pub struct GuardConfig {
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Bearer tokens, when the server requires authentication.
    pub tokens: Option<Arc<TokenMap>>,
}

/// The middleware (use with `axum::middleware::from_fn_with_state`).
pub async fn guard(State(config): State<Arc<GuardConfig>>, mut request: Request, next: Next) -> Response {
    if let Some(tokens) = &config.tokens {
        let authorization = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        match tokens.authenticate(authorization) {
            Ok(principal) => {
                request.extensions_mut().insert(principal);
            }
            Err(e) => {
                let mut response = rpc_error(StatusCode::UNAUTHORIZED, Value::Null, INVALID_REQUEST, e.to_string(), None);
                response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return response;
            }
        }
    }
    if request.method() != Method::POST || !is_json(&request) {
        // rmcp answers other methods (405) and content types (415) correctly.
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, config.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(e) if is_length_limit(&e) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                INVALID_REQUEST,
                format!("request body exceeds this server's limit of {} bytes", config.max_body_bytes),
                Some(json!({"maxBodyBytes": config.max_body_bytes})),
            );
        }
        Err(e) => {
            return rpc_error(StatusCode::BAD_REQUEST, Value::Null, INVALID_REQUEST, format!("cannot read request body: {e}"), None);
        }
    };
    if let Err(response) = check(&bytes) {
        return *response;
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json"))
}

fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = err.source();
    }
    false
}

/// Checks a body is a JSON-RPC message whose params have the right types.
fn check(bytes: &Bytes) -> Result<(), Box<Response>> {
    let message: Value = serde_json::from_slice(bytes).map_err(|e| {
        Box::new(rpc_error(StatusCode::BAD_REQUEST, Value::Null, PARSE_ERROR, format!("parse error: body is not valid JSON: {e}"), None))
    })?;
    let Some(object) = message.as_object() else {
        return Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            INVALID_REQUEST,
            "invalid request: a JSON-RPC message must be a JSON object".to_owned(),
            None,
        )));
    };
    let id = object.get("id").cloned().unwrap_or(Value::Null);
    if object.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"".to_owned(),
            None,
        )));
    }
    let (Some(Value::String(method)), true) = (object.get("method"), object.contains_key("id")) else {
        return Ok(()); // responses and notifications: rmcp's business
    };
    let params = object.get("params").cloned().unwrap_or(Value::Null);
    let problem = match method.as_str() {
        "tasks/get" => typed::<GetTaskParams>(params),
        "tasks/cancel" => typed::<CancelTaskParams>(params),
        "tasks/update" => typed::<UpdateTaskParams>(params),
        "tools/call" => typed::<CallToolRequestParams>(params),
        _ => None,
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_PARAMS,
            format!("invalid params for {method}: {problem}"),
            Some(json!({"method": method})),
        ))),
    }
}

fn typed<T: serde::de::DeserializeOwned>(params: Value) -> Option<String> {
    if params.is_null() {
        return Some("params are missing".to_owned());
    }
    serde_json::from_value::<T>(params).err().map(|e| e.to_string())
}

/// A JSON-RPC error response with an HTTP status.
pub fn rpc_error(status: StatusCode, id: Value, code: i64, message: String, data: Option<Value>) -> Response {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(bytes: &str) -> Option<(u16, i64, String)> {
        let response = check(&Bytes::from(bytes.to_owned())).err()?;
        let status = response.status().as_u16();
        let body = futures_body(*response);
        let v: Value = serde_json::from_slice(&body).unwrap();
        Some((status, v["error"]["code"].as_i64().unwrap(), v["error"]["message"].as_str().unwrap().to_owned()))
    }

    fn futures_body(r: Response) -> Bytes {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(axum::body::to_bytes(r.into_body(), usize::MAX))
            .unwrap()
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        let (status, code, _) = code_of("{\"jsonrpc\":").unwrap();
        assert_eq!((status, code), (400, PARSE_ERROR));
    }

    #[test]
    fn a_numeric_task_id_is_invalid_params_naming_the_field() {
        let (status, code, message) =
            code_of(r#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":42}}"#).unwrap();
        assert_eq!((status, code), (400, INVALID_PARAMS));
        assert!(message.contains("tasks/get") && message.contains("integer"), "{message}");
    }

    #[test]
    fn well_typed_messages_pass() {
        assert!(code_of(r#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"x"}}"#).is_none());
        assert!(code_of(r#"{"jsonrpc":"2.0","id":7,"method":"unknown/thing","params":{}}"#).is_none());
        assert!(code_of(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#).is_none());
    }

    #[test]
    fn non_objects_are_invalid_requests() {
        assert_eq!(code_of("[1,2]").map(|c| c.1), Some(INVALID_REQUEST));
        assert_eq!(code_of(r#"{"id":1,"method":"tools/list"}"#).map(|c| c.1), Some(INVALID_REQUEST));
    }
}
