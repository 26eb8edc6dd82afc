//! The suite's resources (`resources-*`, `sep-2164-resource-not-found`) and
//! completions (`completion-complete`).

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ArgumentInfo, CompleteResult, CompletionInfo, ReadResourceResult, Reference, Resource, ResourceContents,
    ResourceTemplate,
};
use serde_json::json;

use super::media::RED_PIXEL_PNG;

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const TEMPLATE: &str = "test://template/{id}/data";

/// The direct resources.
pub(crate) fn resources() -> Vec<Resource> {
    vec![
        Resource::new(STATIC_TEXT, "static-text").with_description("A static text resource.").with_mime_type("text/plain"),
        Resource::new(STATIC_BINARY, "static-binary")
            .with_description("A static binary resource (a 1x1 PNG).")
            .with_mime_type("image/png"),
    ]
}

/// The resource templates.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(TEMPLATE, "template-data")
            .with_description("Data for an id.")
            .with_mime_type("application/json"),
    ]
}

/// `resources/read`: a known resource or template instance; `-32602` naming
/// the URI otherwise (SEP-2164: never an empty `contents`).
pub(crate) fn read(uri: &str) -> Result<ReadResourceResult, McpError> {
    let contents = match uri {
        STATIC_TEXT => {
            ResourceContents::text("This is the content of the static text resource.", uri).with_mime_type("text/plain")
        }
        STATIC_BINARY => ResourceContents::blob(RED_PIXEL_PNG, uri).with_mime_type("image/png"),
        _ => match uri.strip_prefix("test://template/").and_then(|rest| rest.strip_suffix("/data")) {
            Some(id) if !id.is_empty() && !id.contains('/') => {
                let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                ResourceContents::text(body.to_string(), uri).with_mime_type("application/json")
            }
            _ => {
                return Err(McpError::invalid_params(format!("Resource not found: {uri}"), Some(json!({"uri": uri}))));
            }
        },
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// `completion/complete`: city names for the prompt's `arg1`, ids for the
/// template's `id`; nothing for anything else.
pub(crate) fn complete(reference: &Reference, argument: &ArgumentInfo) -> Result<CompleteResult, McpError> {
    let candidates: &[&str] = match (reference, argument.name.as_str()) {
        (Reference::Prompt(p), "arg1" | "arg2") if p.name == "test_prompt_with_arguments" => {
            &["paris", "park", "party", "hello", "world"]
        }
        (Reference::Resource(_), "id") => &["1", "2", "3", "123"],
        _ => &[],
    };
    let values: Vec<String> =
        candidates.iter().filter(|c| c.starts_with(argument.value.as_str())).map(|c| (*c).to_owned()).collect();
    let info = CompletionInfo::with_all_values(values).map_err(|e| McpError::internal_error(e, None))?;
    Ok(CompleteResult::new(info))
}
