//! The suite's prompts (`prompts-*`, `completion-complete`,
//! `input-required-result-non-tool-request`), declared with rmcp's
//! `#[prompt_router]`; the one that asks for input first is answered by
//! [`ConformanceServer::get_prompt_asking`].

use std::collections::BTreeMap;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequest, InputRequiredResult, Prompt,
    PromptArgument, PromptMessage, ResourceContents, Role,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, prompt, prompt_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::media::RED_PIXEL_PNG;
use super::server::ConformanceServer;
use crate::input_capabilities::declared_only;

/// The prompt that asks the client for context before it answers.
pub(crate) const ASKING_PROMPT: &str = "test_input_required_result_prompt";

/// `test_prompt_with_arguments`' arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct TwoArgs {
    /// First test argument.
    pub arg1: String,
    /// Second test argument.
    pub arg2: String,
}

/// `test_prompt_with_embedded_resource`'s argument.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(rename_all = "camelCase")]
pub struct EmbedArgs {
    /// URI of the resource to embed.
    pub resource_uri: String,
}

// `#[prompt]` generates a public metadata function per prompt, undocumented.
#[allow(missing_docs)]
#[prompt_router(vis = "pub(crate)")]
impl ConformanceServer {
    #[prompt(description = "A simple prompt without arguments.")]
    async fn test_simple_prompt(&self) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, "This is a simple prompt for testing.")]
    }

    #[prompt(description = "A prompt with two required arguments.")]
    async fn test_prompt_with_arguments(&self, Parameters(args): Parameters<TwoArgs>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            format!("Prompt with arguments: arg1='{}', arg2='{}'", args.arg1, args.arg2),
        )]
    }

    #[prompt(description = "A prompt embedding the resource it is given.")]
    async fn test_prompt_with_embedded_resource(&self, Parameters(args): Parameters<EmbedArgs>) -> Vec<PromptMessage> {
        let resource =
            ResourceContents::text("Embedded resource content for testing.", args.resource_uri).with_mime_type("text/plain");
        vec![
            PromptMessage::new(Role::User, ContentBlock::resource(resource)),
            PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
        ]
    }

    #[prompt(description = "A prompt with an image.")]
    async fn test_prompt_with_image(&self) -> Vec<PromptMessage> {
        vec![
            PromptMessage::new(Role::User, ContentBlock::image(RED_PIXEL_PNG, "image/png")),
            PromptMessage::new_text(Role::User, "Please analyze the image above."),
        ]
    }
}

impl ConformanceServer {
    /// The listing entry of [`ASKING_PROMPT`].
    pub(crate) fn asking_prompt() -> Prompt {
        Prompt::new(ASKING_PROMPT, Some("Asks for context (elicitation) before it is built."), None::<Vec<PromptArgument>>)
    }

    /// [`ASKING_PROMPT`]: an `InputRequiredResult` until the client's
    /// `inputResponses` carry the context.
    pub(crate) fn get_prompt_asking(
        &self,
        request: &GetPromptRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let context = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get("user_context"))
            .filter(|a| a.get("action").and_then(Value::as_str) == Some("accept"))
            .and_then(|a| a.get("content")?.get("context")?.as_str());
        if let Some(context) = context {
            let message = PromptMessage::new_text(Role::User, format!("Answer with this context in mind: {context}"));
            return Ok(GetPromptResponse::Complete(GetPromptResult::new(vec![message])));
        }
        let ask: InputRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": {
            "message": "What context should the prompt use?",
            "requestedSchema": {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
        }}))
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let requests = declared_only(
            BTreeMap::from([("user_context".to_owned(), ask)]),
            &cx.client_capabilities().unwrap_or_default(),
        )?;
        Ok(GetPromptResponse::InputRequired(InputRequiredResult::new(Some(requests), None)))
    }
}
