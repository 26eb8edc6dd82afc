//! The idempotency key a `tools/call` may carry in `_meta`
//! ([`IDEMPOTENCY_KEY_META_KEY`]), checked before anything is stored.
//!
//! Every store keeps the same keys: a key PostgreSQL would refuse (a NUL
//! byte) or could not index (a few kilobytes) is refused here, for every
//! store alike, rather than failing as an unavailable store. A key that is
//! not a string is refused too: ignoring it would create a second task for
//! a call the client meant to be idempotent.

use rmcp::ErrorData as McpError;
use rmcp::model::RequestMetaObject;
use serde_json::{Value, json};

use crate::wire::IDEMPOTENCY_KEY_META_KEY;

/// Longest idempotency key, in bytes (as long as Stripe's).
pub const MAX_IDEMPOTENCY_KEY_BYTES: usize = 255;

/// The request's idempotency key, if it carries one; `-32602` naming the
/// key and what is wrong with it when it is not 1 to
/// [`MAX_IDEMPOTENCY_KEY_BYTES`] bytes of text without control characters.
pub(crate) fn idempotency_key(meta: &RequestMetaObject) -> Result<Option<String>, McpError> {
    let Some(value) = meta.get(IDEMPOTENCY_KEY_META_KEY) else {
        return Ok(None);
    };
    let problem = match value {
        Value::String(key) if key.is_empty() => "is empty".to_owned(),
        Value::String(key) if key.len() > MAX_IDEMPOTENCY_KEY_BYTES => {
            format!("is {} bytes long; at most {MAX_IDEMPOTENCY_KEY_BYTES} are allowed", key.len())
        }
        Value::String(key) => match key.chars().enumerate().find(|(_, c)| c.is_control()) {
            Some((at, c)) => format!("holds a control character (U+{:04X}) at character {at}", u32::from(c)),
            None => return Ok(Some(key.clone())),
        },
        other => format!("is {}, not a string", mcp_tasks_wire::json_kind(other)),
    };
    Err(McpError::invalid_params(
        format!("the idempotency key in _meta[\"{IDEMPOTENCY_KEY_META_KEY}\"] {problem}"),
        Some(json!({"metaKey": IDEMPOTENCY_KEY_META_KEY})),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(value: Value) -> RequestMetaObject {
        let mut meta = RequestMetaObject::default();
        meta.0.insert(IDEMPOTENCY_KEY_META_KEY.to_owned(), value);
        meta
    }

    fn refusal(value: Value) -> String {
        let e = idempotency_key(&meta(value)).expect_err("refused");
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        e.message.into_owned()
    }

    #[test]
    fn a_printable_key_up_to_the_limit_is_taken_as_it_is() {
        assert_eq!(idempotency_key(&RequestMetaObject::default()).unwrap(), None);
        assert_eq!(idempotency_key(&meta(json!("order-17 ü"))).unwrap().as_deref(), Some("order-17 ü"));
        let longest = "k".repeat(MAX_IDEMPOTENCY_KEY_BYTES);
        assert_eq!(idempotency_key(&meta(json!(longest))).unwrap(), Some(longest));
    }

    #[test]
    fn a_key_no_store_keeps_alike_is_refused_naming_what_is_wrong() {
        assert!(refusal(json!("")).ends_with("is empty"));
        assert!(refusal(json!("k".repeat(256))).contains("is 256 bytes long; at most 255"));
        assert!(refusal(json!("bad\u{0}key")).contains("control character (U+0000) at character 3"));
        assert!(refusal(json!("tab\there")).contains("(U+0009)"));
        assert!(refusal(json!(17)).contains("is a number, not a string"));
        assert!(refusal(json!(null)).contains("is null, not a string"));
        assert!(refusal(json!({"k": 1})).contains(IDEMPOTENCY_KEY_META_KEY));
    }
}
