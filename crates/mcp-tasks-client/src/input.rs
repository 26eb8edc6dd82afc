//! Answering a server's input requests (elicitation, sampling, roots) —
//! through a callback the application supplies.

use std::future::Future;

use async_trait::async_trait;
use rmcp::model::InputRequest;
use serde_json::{Value, json};

/// One question from the server.
#[derive(Debug, Clone)]
pub struct InputPrompt {
    /// The task asking, or `None` for an input round on `tools/call` itself.
    pub task_id: Option<String>,
    /// The tool that was called.
    pub tool: String,
    /// The server's key for this request (unique for the task's lifetime).
    pub key: String,
    /// The request.
    pub request: InputRequest,
}

/// Answers input requests. Each key is asked at most once per task.
#[async_trait]
pub trait InputResponder: Send + Sync {
    /// The response to send for `prompt` (an `ElicitResult`, `CreateMessageResult`
    /// or `ListRootsResult` as JSON), or `None` to leave it unanswered.
    async fn respond(&self, prompt: &InputPrompt) -> Option<Value>;
}

/// Declines every elicitation and reports no roots; leaves sampling unanswered.
/// The right default for a client with no user to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeclineAll;

#[async_trait]
impl InputResponder for DeclineAll {
    async fn respond(&self, prompt: &InputPrompt) -> Option<Value> {
        match &prompt.request {
            InputRequest::Elicitation(_) => Some(elicit_decline()),
            InputRequest::ListRoots(_) => Some(json!({ "roots": [] })),
            _ => None,
        }
    }
}

/// An [`InputResponder`] made from an async closure.
pub struct FnResponder<F>(pub F);

impl<F> std::fmt::Debug for FnResponder<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnResponder")
    }
}

#[async_trait]
impl<F, Fut> InputResponder for FnResponder<F>
where
    F: Fn(InputPrompt) -> Fut + Send + Sync,
    Fut: Future<Output = Option<Value>> + Send,
{
    async fn respond(&self, prompt: &InputPrompt) -> Option<Value> {
        (self.0)(prompt.clone()).await
    }
}

/// An `ElicitResult` accepting with `content`.
pub fn elicit_accept(content: Value) -> Value {
    json!({ "action": "accept", "content": content })
}

/// An `ElicitResult` declining.
pub fn elicit_decline() -> Value {
    json!({ "action": "decline" })
}

/// An `ElicitResult` cancelling.
pub fn elicit_cancel() -> Value {
    json!({ "action": "cancel" })
}
