//! Typed elicitation from a durable tool: ask the user for a value of a Rust
//! type, the way rmcp's `Peer::elicit::<T>` does for a request in flight.
//!
//! rmcp's `elicit` sends a server-to-client request, which protocol
//! 2026-07-28 forbids; a durable tool asks through the task instead
//! ([`TaskContext::request_input`]): the question is stored, the task shows
//! `input_required`, the answer may come through any instance and survives a
//! restart. This module derives the question's `requestedSchema` from `T`
//! (as rmcp does) and reads the answer back as a `T`.
//!
//! ```
//! use mcp_tasks_server::elicit::{Elicit, Elicited};
//! use mcp_tasks_server::{TaskContext, ToolFailure};
//!
//! #[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
//! struct Approval {
//!     /// Whether to go ahead.
//!     approve: bool,
//!     /// Why, for the audit log.
//!     reason: Option<String>,
//! }
//!
//! async fn deploy(ctx: TaskContext) -> Result<String, ToolFailure> {
//!     match ctx.elicit::<Approval>("approval", "Deploy version 2.4 to production?").await? {
//!         Elicited::Accepted(Approval { approve: true, .. }) => Ok("deployed".to_owned()),
//!         Elicited::Accepted(Approval { reason, .. }) => Ok(format!("not deployed: {}", reason.unwrap_or_default())),
//!         Elicited::Declined | Elicited::Cancelled => Ok("not deployed: no answer".to_owned()),
//!     }
//! }
//! ```

use std::collections::BTreeMap;
use std::future::Future;

use mcp_tasks_runtime::{TaskContext, ToolFailure};
use rmcp::model::ElicitationSchema;
use rmcp::schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// What the user did with a typed question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// Answered, with content of the asked type.
    Accepted(T),
    /// Refused to answer.
    Declined,
    /// Dismissed the question without choosing.
    Cancelled,
}

/// Typed elicitation on a [`TaskContext`].
pub trait Elicit {
    /// Asks the user `message`, expecting a `T` (a flat object of strings,
    /// numbers, booleans and enums, as MCP elicitation allows), under input
    /// key `key` (unique within the task; a re-run handler asking the same
    /// key gets the stored answer without asking again). Fails with a
    /// permanent [`ToolFailure`] if `T` is not a schema elicitation allows or
    /// an accepted answer does not fit `T`, and ends the attempt when the
    /// task is cancelled.
    fn elicit<T>(&self, key: &str, message: &str) -> impl Future<Output = Result<Elicited<T>, ToolFailure>> + Send
    where
        T: JsonSchema + DeserializeOwned;
}

impl Elicit for TaskContext {
    async fn elicit<T>(&self, key: &str, message: &str) -> Result<Elicited<T>, ToolFailure>
    where
        T: JsonSchema + DeserializeOwned,
    {
        let request = elicitation_request::<T>(message)?;
        let mut answers = self.request_input(BTreeMap::from([(key.to_owned(), request)])).await?;
        read_answer(key, answers.remove(key).unwrap_or(Value::Null))
    }
}

/// The stored input request: `elicitation/create` in form mode, its schema
/// derived from `T`.
fn elicitation_request<T: JsonSchema>(message: &str) -> Result<Value, ToolFailure> {
    let schema = ElicitationSchema::from_type::<T>().map_err(|e| {
        ToolFailure::permanent(format!(
            "cannot ask for a {}: elicitation allows only a flat object of primitive fields ({e})",
            std::any::type_name::<T>()
        ))
    })?;
    Ok(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }))
}

/// An elicitation answer (`{"action": …, "content": …}`) as an [`Elicited`].
fn read_answer<T: DeserializeOwned>(key: &str, answer: Value) -> Result<Elicited<T>, ToolFailure> {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let content = answer.get("content").cloned().unwrap_or_else(|| json!({}));
            serde_json::from_value(content).map(Elicited::Accepted).map_err(|e| {
                ToolFailure::permanent(format!("the answer to {key:?} does not fit {}: {e}", std::any::type_name::<T>()))
            })
        }
        Some("decline") => Ok(Elicited::Declined),
        _ => Ok(Elicited::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize, JsonSchema)]
    struct Approval {
        approve: bool,
        reason: Option<String>,
    }

    #[test]
    fn the_schema_is_derived_from_the_type() {
        let request = elicitation_request::<Approval>("Deploy?").unwrap();
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Deploy?");
        let schema = &request["params"]["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["approve"]["type"], "boolean");
        assert_eq!(schema["required"], json!(["approve"]));
    }

    #[test]
    fn a_nested_type_is_refused_with_its_name() {
        #[derive(serde::Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Nested {
            inner: Approval,
        }
        let e = elicitation_request::<Nested>("?").unwrap_err();
        assert!(e.message.contains("Nested") && e.message.contains("flat object"), "{}", e.message);
    }

    #[test]
    fn answers_read_back_as_the_type_or_say_why_not() {
        let ok = read_answer::<Approval>("a", json!({"action": "accept", "content": {"approve": true}})).unwrap();
        assert_eq!(ok, Elicited::Accepted(Approval { approve: true, reason: None }));
        assert_eq!(read_answer::<Approval>("a", json!({"action": "decline"})).unwrap(), Elicited::Declined);
        assert_eq!(read_answer::<Approval>("a", json!({"action": "cancel"})).unwrap(), Elicited::Cancelled);
        let e = read_answer::<Approval>("a", json!({"action": "accept", "content": {"approve": "yes"}})).unwrap_err();
        assert!(e.message.contains("\"a\"") && e.message.contains("Approval"), "{}", e.message);
    }
}
