//! The suite's multi-round-trip tools (SEP-2322, `input-required-result-*`,
//! `server-stateless`, `tasks-mrtr-composition`): each round answers with
//! an `InputRequiredResult` until the client's `inputResponses` hold what it
//! asked for. Input requests go only to a client that declared their
//! capability ([`declared_only`]); state that must survive a round travels
//! in a `requestState` sealed by the server's key
//! ([`DurableTasks::request_state`](crate::DurableTasks::request_state)),
//! so a tampered or expired one is refused with `-32602`.

use rmcp::handler::server::tool::{InputResponses as Answers, RequestState as State};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, tool, tool_router};
use serde_json::{Value, json};

use super::server::ConformanceServer;
use crate::input_capabilities::{declared_only, missing_capabilities};

/// An `elicitation/create` request for a form of `properties`, all required.
fn elicit(message: &str, properties: Value) -> InputRequest {
    let required: Vec<&String> = properties.as_object().map(|p| p.keys().collect()).unwrap_or_default();
    request(json!({"method": "elicitation/create", "params": {"message": message,
        "requestedSchema": {"type": "object", "properties": properties, "required": required}}}))
}

/// A `sampling/createMessage` request for one user text.
fn sample(text: &str, max_tokens: u32) -> InputRequest {
    request(json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens}}))
}

/// A `roots/list` request.
fn roots() -> InputRequest {
    request(json!({"method": "roots/list", "params": {}}))
}

fn request(value: Value) -> InputRequest {
    serde_json::from_value(value).unwrap_or_else(|e| unreachable!("a fixed input request is valid: {e}"))
}

/// The accepted content of elicitation answer `key`, if it is one.
fn accepted<'a>(responses: &'a Option<InputResponses>, key: &str) -> Option<&'a serde_json::Map<String, Value>> {
    let answer = responses.as_ref()?.get(key)?;
    (answer.get("action")?.as_str()? == "accept").then(|| answer.get("content")?.as_object()).flatten()
}

/// The text of sampling answer `key`.
fn sampled<'a>(responses: &'a Option<InputResponses>, key: &str) -> Option<&'a str> {
    responses.as_ref()?.get(key)?.get("content")?.get("text")?.as_str()
}

/// The roots of `roots/list` answer `key`.
fn listed_roots<'a>(responses: &'a Option<InputResponses>, key: &str) -> Option<&'a Vec<Value>> {
    responses.as_ref()?.get(key)?.get("roots")?.as_array()
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text)]))
}

impl ConformanceServer {
    /// `requests`, kept to what the client declared, with `state` sealed for `tool`.
    fn ask(
        &self,
        cx: &RequestContext<RoleServer>,
        tool: &str,
        requests: InputRequests,
        state: Option<&[u8]>,
    ) -> Result<CallToolResponse, McpError> {
        let capabilities = cx.client_capabilities().unwrap_or_default();
        let requests = declared_only(requests, &capabilities)?;
        let state = state.map(|payload| self.tasks.request_state().seal(payload, tool.as_bytes()));
        Ok(CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), state)))
    }

    /// The payload of the echoed state, sealed for `tool` by this server.
    fn opened(&self, state: &Option<String>, tool: &str) -> Result<Option<Vec<u8>>, McpError> {
        match state {
            Some(sealed) => Ok(Some(self.tasks.request_state().open(sealed, tool.as_bytes())?)),
            None => Ok(None),
        }
    }
}

#[tool_router(router = mrtr_router, vis = "pub(crate)")]
impl ConformanceServer {
    #[tool(description = "Asks for your name (elicitation), then greets you.")]
    async fn test_input_required_result_elicitation(
        &self,
        Answers(responses): Answers,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match accepted(&responses, "user_name").and_then(|c| c.get("name")).and_then(Value::as_str) {
            Some(name) => Ok(text(format!("Hello, {name}!"))),
            // Missing, wrong or malformed answers: ask again.
            None => self.ask(
                &cx,
                "test_input_required_result_elicitation",
                InputRequests::from([(
                    "user_name".into(),
                    elicit("What is your name?", json!({"name": {"type": "string"}})),
                )]),
                None,
            ),
        }
    }

    #[tool(description = "Asks the client's model a question (sampling), then reports its answer.")]
    async fn test_input_required_result_sampling(
        &self,
        Answers(responses): Answers,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match sampled(&responses, "capital_question") {
            Some(answer) => Ok(text(format!("The model answered: {answer}"))),
            None => self.ask(
                &cx,
                "test_input_required_result_sampling",
                InputRequests::from([("capital_question".into(), sample("What is the capital of France?", 100))]),
                None,
            ),
        }
    }

    #[tool(description = "Asks for the client's roots, then lists them.")]
    async fn test_input_required_result_list_roots(
        &self,
        Answers(responses): Answers,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match listed_roots(&responses, "client_roots") {
            Some(roots) => {
                let uris: Vec<&str> = roots.iter().filter_map(|r| r.get("uri")?.as_str()).collect();
                Ok(text(format!("roots: {}", uris.join(", "))))
            }
            None => self.ask(
                &cx,
                "test_input_required_result_list_roots",
                InputRequests::from([("client_roots".into(), roots())]),
                None,
            ),
        }
    }

    #[tool(description = "Asks for confirmation with a sealed requestState, and checks the state it gets back.")]
    async fn test_input_required_result_request_state(
        &self,
        Answers(responses): Answers,
        State(state): State,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.confirm_with_state(responses, state, cx, "test_input_required_result_request_state").await
    }

    #[tool(description = "Like the request-state tool: a changed requestState is refused.")]
    async fn test_input_required_result_tampered_state(
        &self,
        Answers(responses): Answers,
        State(state): State,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.confirm_with_state(responses, state, cx, "test_input_required_result_tampered_state").await
    }

    #[tool(description = "Asks for a name, a sampled greeting and the roots at once.")]
    async fn test_input_required_result_multiple_inputs(
        &self,
        Answers(responses): Answers,
        State(state): State,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        const TOOL: &str = "test_input_required_result_multiple_inputs";
        let opened = self.opened(&state, TOOL)?;
        let name = accepted(&responses, "user_name").and_then(|c| c.get("name")).and_then(Value::as_str);
        let greeting = sampled(&responses, "greeting");
        let listed = listed_roots(&responses, "client_roots");
        if let (Some(_), Some(name), Some(greeting), Some(listed)) = (opened, name, greeting, listed) {
            return Ok(text(format!("{greeting}, {name}! ({} roots)", listed.len())));
        }
        let requests = InputRequests::from([
            ("user_name".into(), elicit("What is your name?", json!({"name": {"type": "string"}}))),
            ("greeting".into(), sample("Generate a greeting", 50)),
            ("client_roots".into(), roots()),
        ]);
        self.ask(&cx, TOOL, requests, Some(b"round=1"))
    }

    #[tool(description = "Asks for a name, then a colour: two rounds, the state evolving.")]
    async fn test_input_required_result_multi_round(
        &self,
        Answers(responses): Answers,
        State(state): State,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        const TOOL: &str = "test_input_required_result_multi_round";
        // The state names the round and carries the first answer.
        let opened: Option<Value> = match self.opened(&state, TOOL)? {
            Some(bytes) => serde_json::from_slice(&bytes).ok(),
            None => None,
        };
        let name_so_far = opened.as_ref().and_then(|s| s.get("name")).and_then(Value::as_str);
        if let Some(name) = name_so_far {
            if let Some(color) = accepted(&responses, "step2").and_then(|c| c.get("color")).and_then(Value::as_str) {
                return Ok(text(format!("{name} likes {color}.")));
            }
            let ask = elicit("Step 2: What is your favorite color?", json!({"color": {"type": "string"}}));
            let state = json!({"round": 2, "name": name}).to_string();
            return self.ask(&cx, TOOL, InputRequests::from([("step2".into(), ask)]), Some(state.as_bytes()));
        }
        if let Some(name) = accepted(&responses, "step1").and_then(|c| c.get("name")).and_then(Value::as_str) {
            let ask = elicit("Step 2: What is your favorite color?", json!({"color": {"type": "string"}}));
            let state = json!({"round": 2, "name": name}).to_string();
            return self.ask(&cx, TOOL, InputRequests::from([("step2".into(), ask)]), Some(state.as_bytes()));
        }
        let ask = elicit("Step 1: What is your name?", json!({"name": {"type": "string"}}));
        self.ask(&cx, TOOL, InputRequests::from([("step1".into(), ask)]), Some(br#"{"round":1}"#))
    }

    #[tool(description = "Asks for whatever the client declared it can give: a form, a sample, its roots.")]
    async fn test_input_required_result_capabilities(
        &self,
        Answers(responses): Answers,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(responses) = responses.filter(|r| !r.is_empty()) {
            return Ok(text(format!("received {} answers", responses.len())));
        }
        let requests = InputRequests::from([
            ("confirm".into(), elicit("Continue?", json!({"ok": {"type": "boolean"}}))),
            ("summary".into(), sample("Summarise the request", 50)),
            ("client_roots".into(), roots()),
        ]);
        self.ask(&cx, "test_input_required_result_capabilities", requests, None)
    }

    #[tool(description = "Diagnostic: asks for confirmation through inputRequests, never on a stream.")]
    async fn test_streaming_elicitation(
        &self,
        Answers(responses): Answers,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(answer) = responses.as_ref().and_then(|r| r.get("confirm")) {
            return Ok(text(format!("answer received: {answer}")));
        }
        let ask = elicit("Continue?", json!({"ok": {"type": "boolean"}}));
        self.ask(&cx, "test_streaming_elicitation", InputRequests::from([("confirm".into(), ask)]), None)
    }

    #[tool(description = "Diagnostic: requires the client's sampling capability.")]
    async fn test_missing_capability(&self, cx: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        if cx.client_capabilities().unwrap_or_default().sampling.is_none() {
            return Err(missing_capabilities(json!({"sampling": {}})));
        }
        Ok(text("the client declared sampling"))
    }

    #[tool(description = "Asks for your name (in the request), then greets you from a task.")]
    async fn test_tool_with_task(
        &self,
        Answers(responses): Answers,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = accepted(&responses, "user_name")
            .and_then(|c| c.get("name").or_else(|| c.get("user_name")).or_else(|| c.values().next()))
            .and_then(Value::as_str);
        match name {
            Some(name) => self.tasks.start_task("test_tool_with_task", json!({"user_name": name}), &cx).await,
            None => {
                if !cx.client_capabilities().unwrap_or_default().supports_tasks() {
                    return Err(crate::errors::tasks_required());
                }
                let ask = elicit("What is your name?", json!({"name": {"type": "string"}}));
                self.ask(&cx, "test_tool_with_task", InputRequests::from([("user_name".into(), ask)]), None)
            }
        }
    }
}

impl ConformanceServer {
    /// One confirmation round whose second round needs the sealed state back.
    async fn confirm_with_state(
        &self,
        responses: Option<InputResponses>,
        state: Option<String>,
        cx: RequestContext<RoleServer>,
        tool: &str,
    ) -> Result<CallToolResponse, McpError> {
        let opened = self.opened(&state, tool)?;
        let answered = responses.is_some_and(|r| r.contains_key("confirm"));
        match opened {
            Some(payload) if answered => Ok(text(format!("state-ok: {} confirmed", String::from_utf8_lossy(&payload)))),
            _ => {
                let ask = elicit("Please confirm", json!({"ok": {"type": "boolean"}}));
                self.ask(&cx, tool, InputRequests::from([("confirm".into(), ask)]), Some(b"confirm"))
            }
        }
    }
}
