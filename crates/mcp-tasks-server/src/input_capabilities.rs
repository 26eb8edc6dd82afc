//! Input requests only for what the client declared (SEP-2322): an
//! `elicitation/create` goes only to a client that declared `elicitation`,
//! `sampling/createMessage` only with `sampling`, `roots/list` only with
//! `roots` — on this request, since 2026-07-28 is stateless.
//!
//! [`declared_only`] is applied to every `InputRequiredResult` and every
//! `tasks/get` payload this crate sends; tools that build their own
//! requests use it too.

use rmcp::ErrorData as McpError;
use rmcp::model::{ClientCapabilities, InputRequest, InputRequests};
use serde_json::{Value, json};

/// The client capability `request` needs: `"elicitation"`, `"sampling"` or `"roots"`.
pub fn required_capability(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicitation(_) => "elicitation",
        InputRequest::CreateMessage(_) => "sampling",
        InputRequest::ListRoots(_) => "roots",
        // A kind rmcp adds later: only a client declaring it by name gets it.
        #[allow(unreachable_patterns)]
        _ => "unknown",
    }
}

/// Whether `capabilities` declare what `request` needs.
pub fn declares(capabilities: &ClientCapabilities, request: &InputRequest) -> bool {
    match required_capability(request) {
        "elicitation" => capabilities.elicitation.is_some(),
        "sampling" => capabilities.sampling.is_some(),
        "roots" => capabilities.roots.is_some(),
        _ => false,
    }
}

/// `requests` without those the client did not declare a capability for.
/// When nothing is left of a non-empty set, `-32021` (missing required
/// client capability) naming the capabilities it needs in
/// `data.requiredCapabilities`: a request that cannot go on without input
/// the client cannot give.
pub fn declared_only(requests: InputRequests, capabilities: &ClientCapabilities) -> Result<InputRequests, McpError> {
    if requests.is_empty() {
        return Ok(requests);
    }
    let mut needed = serde_json::Map::new();
    let mut kept = InputRequests::new();
    for (key, request) in requests {
        if declares(capabilities, &request) {
            kept.insert(key, request);
        } else {
            needed.insert(required_capability(&request).to_owned(), json!({}));
        }
    }
    if kept.is_empty() {
        return Err(missing_capabilities(Value::Object(needed)));
    }
    Ok(kept)
}

/// `-32021` naming `required` (a capabilities object) in `data.requiredCapabilities`.
pub fn missing_capabilities(required: Value) -> McpError {
    let names: Vec<&str> = required.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
    McpError::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("this request needs input the client did not declare it can give (capabilities: {})", names.join(", ")),
        Some(json!({"requiredCapabilities": required})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(value: Value) -> InputRequest {
        serde_json::from_value(value).unwrap()
    }

    fn three() -> InputRequests {
        InputRequests::from([
            (
                "ask".to_owned(),
                request(json!({"method": "elicitation/create", "params": {"message": "name?",
                    "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}})),
            ),
            (
                "sample".to_owned(),
                request(json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}})),
            ),
            ("roots".to_owned(), request(json!({"method": "roots/list", "params": {}}))),
        ])
    }

    fn capabilities(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_declared_kinds_are_kept() {
        let kept = declared_only(three(), &capabilities(json!({"sampling": {}}))).unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["sample"]);
        let kept = declared_only(three(), &capabilities(json!({"elicitation": {}, "roots": {}}))).unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["ask", "roots"]);
    }

    #[test]
    fn nothing_declared_is_missing_capability_naming_them() {
        let e = declared_only(three(), &ClientCapabilities::default()).unwrap_err();
        assert_eq!(e.code.0, -32021);
        let required = &e.data.unwrap()["requiredCapabilities"];
        assert_eq!(required, &json!({"elicitation": {}, "sampling": {}, "roots": {}}));
    }

    #[test]
    fn no_requests_need_nothing() {
        assert!(declared_only(InputRequests::new(), &ClientCapabilities::default()).unwrap().is_empty());
    }
}
