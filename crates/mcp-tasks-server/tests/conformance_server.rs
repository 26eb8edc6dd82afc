//! What an rmcp handler served with durable tools publishes: tool input
//! schemas exactly as written (JSON Schema 2020-12 keywords kept), custom
//! header parameters checked against the body (SEP-2243), caching hints on
//! list results (SEP-2549) — the handler's own, or "not cacheable" added by
//! `Durable` when it gave none.

use crate::common;
use common::*;
use serde_json::{Value, json};

async fn list(url: &str, method: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": request_meta(true)}});
    let (status, reply) = post_raw(url, body.to_string(), &[("Mcp-Method", method)]).await;
    assert_eq!(status, 200, "{reply}");
    reply["result"].clone()
}

#[tokio::test]
async fn a_tool_schema_is_published_as_written() {
    let h = start().await;
    let tools = list(&h.url, "tools/list").await;
    let tool = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == "json_schema_2020_12_tool").unwrap();
    let schema = &tool["inputSchema"];
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert_eq!(schema["properties"]["address"]["$ref"], "#/$defs/address");
    assert_eq!(schema["allOf"][0]["anyOf"][1]["required"], json!(["email"]));
    assert_eq!(schema["if"]["properties"]["contactMethod"]["const"], "phone");
    assert_eq!(schema["then"]["required"], json!(["phone"]));
    assert_eq!(schema["else"]["required"], json!(["email"]));
    assert_eq!(schema["additionalProperties"], false);
    h.stop().await;
}

#[tokio::test]
async fn list_results_carry_caching_hints() {
    let h = start().await;
    for method in ["tools/list", "prompts/list", "resources/list", "resources/templates/list"] {
        let result = list(&h.url, method).await;
        assert_eq!(result["ttlMs"], 60_000, "{method}: {result}");
        assert_eq!(result["cacheScope"], "public", "{method}: {result}");
    }
    h.stop().await;
}

#[tokio::test]
async fn durable_adds_not_cacheable_hints_to_a_listing_without_any() {
    // The stand-alone server's own handler gives no hints.
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(mcp_tasks_sqlite::SqliteStore::open(dir.path().join("t.db")).unwrap());
    let server = mcp_tasks_server::tools::ToolSet::Demo
        .register(mcp_tasks_server::TaskServer::builder(store).single_node(true))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async move {
        let _ = stopped.await;
    }));
    let result = list(&url, "tools/list").await;
    assert!(!result["tools"].as_array().unwrap().is_empty(), "{result}");
    assert_eq!(result["ttlMs"], 0, "{result}");
    assert_eq!(result["cacheScope"], "private", "{result}");
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

/// A `tools/call` of `test_custom_headers` with `region` in the body and,
/// if given, the `Mcp-Param-Region` header.
async fn call_with_header(url: &str, region: &str, header: Option<&str>) -> (u16, Value) {
    let params = json!({"name": "test_custom_headers", "arguments": {"region": region}, "_meta": request_meta(false)});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let mut headers = vec![("Mcp-Method", "tools/call"), ("Mcp-Name", "test_custom_headers")];
    if let Some(value) = header {
        headers.push(("Mcp-Param-Region", value));
    }
    post_raw(url, body.to_string(), &headers).await
}

#[tokio::test]
async fn custom_header_parameters_are_checked_against_the_body() {
    let h = start().await;
    let tools = list(&h.url, "tools/list").await;
    let tool = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == "test_custom_headers").unwrap();
    assert_eq!(tool["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region");

    let (status, reply) = call_with_header(&h.url, "eu-west", Some("eu-west")).await;
    assert_eq!((status, reply["result"]["content"][0]["text"].clone()), (200, json!("region: eu-west")), "{reply}");
    // Base64-wrapped values are decoded ("Hello").
    let (status, reply) = call_with_header(&h.url, "Hello", Some("=?base64?SGVsbG8=?=")).await;
    assert_eq!(status, 200, "{reply}");

    for (header, why) in [
        (None, "header missing"),
        (Some("us-east"), "header differs from the body"),
        (Some("=?base64?SGVsbG8?="), "bad Base64 padding"),
    ] {
        let region = if why == "bad Base64 padding" { "Hello" } else { "eu-west" };
        let (status, reply) = call_with_header(&h.url, region, header).await;
        assert_eq!(status, 400, "{why}: {reply}");
        assert_eq!(reply["error"]["code"], -32020, "{why}: {reply}");
    }
    still_serves(&h.url).await;
    h.stop().await;
}
