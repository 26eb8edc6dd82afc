//! Checks an answer to an input request before it is stored: an
//! elicitation answer (`{"action": "accept"|"decline"|"cancel", "content"?}`)
//! must name a known action, and an accepted one's `content` must match the
//! request's `requestedSchema`. Answers to other requests are stored as sent.

use serde_json::Value;

use crate::schema::{CompiledSchema, SchemaViolation};

/// The actions an elicitation answer may take.
const ACTIONS: [&str; 3] = ["accept", "decline", "cancel"];

/// What is wrong with `answer` to `request` (empty when nothing is).
pub(crate) fn answer_violations(request: &Value, answer: &Value) -> Vec<SchemaViolation> {
    if request.get("method").and_then(Value::as_str) != Some("elicitation/create") {
        return Vec::new();
    }
    let action = answer.get("action").and_then(Value::as_str);
    let Some(action) = action.filter(|a| ACTIONS.contains(a)) else {
        return vec![SchemaViolation {
            pointer: "/action".to_owned(),
            expected: format!(
                "one of \"accept\", \"decline\", \"cancel\" (got {})",
                answer.get("action").map_or_else(|| "nothing".to_owned(), Value::to_string)
            ),
        }];
    };
    // Only an accepted answer carries content to check.
    let Some(schema) = request.pointer("/params/requestedSchema").filter(|_| action == "accept") else {
        return Vec::new();
    };
    let compiled = match CompiledSchema::compile(schema) {
        Ok(compiled) => compiled,
        Err(reason) => {
            // The tool's own request is at fault, not the client: take the answer.
            tracing::warn!(%reason, "an input request's requestedSchema is not a valid JSON Schema; its answer is not checked");
            return Vec::new();
        }
    };
    let empty = Value::Object(Default::default());
    let content = answer.get("content").unwrap_or(&empty);
    compiled
        .violations(content)
        .into_iter()
        .map(|v| SchemaViolation { pointer: format!("/content{}", v.pointer), ..v })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn confirm() -> Value {
        json!({"method": "elicitation/create", "params": {"message": "Sure?", "requestedSchema": {
            "type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]
        }}})
    }

    #[test]
    fn accepted_content_must_match_the_requested_schema() {
        assert!(answer_violations(&confirm(), &json!({"action": "accept", "content": {"confirm": true}})).is_empty());
        let bad = answer_violations(&confirm(), &json!({"action": "accept", "content": {"confirm": "banana"}}));
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].pointer, "/content/confirm");
        assert!(bad[0].expected.contains("boolean"), "{}", bad[0]);
        let missing = answer_violations(&confirm(), &json!({"action": "accept"}));
        assert_eq!(missing[0].pointer, "/content/confirm");
    }

    #[test]
    fn declines_carry_nothing_to_check_but_the_action_must_be_known() {
        assert!(answer_violations(&confirm(), &json!({"action": "decline"})).is_empty());
        assert!(answer_violations(&confirm(), &json!({"action": "cancel", "content": {"confirm": "x"}})).is_empty());
        let bad = answer_violations(&confirm(), &json!({"action": "maybe"}));
        assert_eq!(bad[0].pointer, "/action");
        assert!(bad[0].expected.contains("\"maybe\""), "{}", bad[0]);
        assert_eq!(answer_violations(&confirm(), &json!(true))[0].pointer, "/action");
    }

    #[test]
    fn other_requests_and_schemaless_ones_are_not_checked() {
        assert!(answer_violations(&json!({"method": "sampling/createMessage"}), &json!(1)).is_empty());
        let schemaless = json!({"method": "elicitation/create", "params": {"message": "?"}});
        assert!(answer_violations(&schemaless, &json!({"action": "accept"})).is_empty());
    }
}
