//! The creation fast path answers exactly as rmcp would: the same requests
//! go, in the same order, to a server with the fast path and to an identical
//! server (its own fresh SQLite store, the same manual clock) with it off;
//! the answers must agree in status, headers and body bytes, and the stored
//! tasks in tool, arguments, principal, idempotency key, traceparent and
//! status. Requests the fast path must not take are checked to reach rmcp.
//!
//! Only the task ids are normalized (each server draws its own random
//! UUIDs): each is replaced by its order of first appearance on its server,
//! so a repeat that must return the same task still has to name the same
//! one. Timestamps need no normalizing: both servers read the one manual
//! clock, which stands still.

use std::collections::HashMap;
use std::sync::Arc;

use crate::common;
use common::*;
use mcp_tasks_core::{ManualClock, Timestamp};
use mcp_tasks_server::{
    Execution, IDEMPOTENCY_KEY_META_KEY, TaskContext, TaskServerBuilder, TaskTool, TokenMap, ToolFailure, ToolSpec,
};
use mcp_tasks_store::ListQuery;
use serde_json::{Value, json};

/// One answer, as the client sees it (task ids normalized).
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    /// Every header but `date`, in order.
    headers: Vec<(String, String)>,
    body: String,
}

/// A typed tool: its arguments are decoded (and refused) before creation.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Batch {
    /// How many items.
    #[schemars(range(min = 1, max = 20))]
    count: u32,
}

/// A durable tool whose `region` argument travels in an `Mcp-Param-Region`
/// header too (`x-mcp-header`), which rmcp checks against the body.
struct Regional;

#[async_trait::async_trait]
impl TaskTool for Regional {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            input_schema: json!({"type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
            execution: Execution::TaskRequired,
            ..ToolSpec::new("regional", "Runs in a region")
        }
    }

    async fn run(&self, ctx: TaskContext) -> Result<Value, ToolFailure> {
        ctx.sleep(std::time::Duration::from_secs(3600)).await?;
        Ok(json!({}))
    }
}

/// One server of the pair and the task ids its answers named, in order.
struct Side {
    h: Harness,
    ids: Vec<String>,
}

impl Side {
    async fn start(clock: Arc<ManualClock>, fast: bool) -> Side {
        let tokens = TokenMap::new([("tok-alice".to_owned(), "alice".to_owned()), ("tok-bob".to_owned(), "bob".to_owned())]);
        let configure = move |b: TaskServerBuilder| {
            b.clock(clock).auth(tokens).fast_create(fast).tool(Regional).task(
                "batch",
                "Processes a batch",
                |args: Batch, ctx: TaskContext| async move {
                    ctx.sleep(std::time::Duration::from_secs(3600)).await?;
                    Ok::<_, ToolFailure>(format!("{} items", args.count))
                },
            )
        };
        Side { h: start_with(configure).await, ids: Vec::new() }
    }

    /// Every stored task, its id normalized: (id, tool, arguments, principal,
    /// idempotency key, traceparent, status).
    async fn rows(&mut self) -> Vec<Value> {
        let records = self.h.server.runtime().store().list(ListQuery::default()).await.unwrap();
        let mut rows: Vec<Value> = records
            .into_iter()
            .map(|r| {
                let index = self.ids.iter().position(|id| *id == r.id.0).expect("every stored task was named in an answer");
                json!([index, r.tool, r.arguments, r.principal, r.idempotency_key, r.trace_parent, r.status.to_string()])
            })
            .collect();
        rows.sort_by_key(|row| row[0].as_u64());
        rows
    }

    /// `body` with every stored task's id replaced by `<task-N>`, N its order
    /// of first appearance in this server's answers.
    async fn normalize(&mut self, mut body: String) -> String {
        let records = self.h.server.runtime().store().list(ListQuery::default()).await.unwrap();
        for id in records.iter().map(|r| r.id.0.clone()) {
            if body.contains(&id) && !self.ids.contains(&id) {
                self.ids.push(id);
            }
        }
        for (index, id) in self.ids.iter().enumerate() {
            body = body.replace(id, &format!("<task-{index}>"));
        }
        body
    }
}

/// A request: its body (sent as `raw` when set) and headers (the standard
/// ones unless overridden).
struct Request {
    body: Value,
    raw: Option<String>,
    headers: Vec<(&'static str, String)>,
}

/// A `tools/call` of `tool` with `arguments` and the standard headers for `token`.
fn call(tool: &str, arguments: Value, token: &str) -> Request {
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": request_meta(true)}});
    Request { body, raw: None, headers: standard_headers(tool, token) }
}

fn standard_headers(name: &str, token: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
        ("Mcp-Name", name.to_owned()),
        ("Authorization", format!("Bearer {token}")),
    ]
}

impl Request {
    fn meta(mut self, key: &str, value: Value) -> Self {
        self.body["params"]["_meta"][key] = value;
        self
    }

    fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name, value.to_owned()));
        self
    }
}

async fn send(side: &mut Side, request: &Request) -> Answer {
    let mut builder = reqwest::Client::new().post(&side.h.url);
    for (name, value) in &request.headers {
        builder = builder.header(*name, value);
    }
    let body = request.raw.clone().unwrap_or_else(|| request.body.to_string());
    let response = builder.body(body).send().await.unwrap();
    let headers = response
        .headers()
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect();
    let status = response.status().as_u16();
    let body = side.normalize(response.text().await.unwrap()).await;
    Answer { status, headers, body }
}

/// Sends `request` to both servers; checks they answer alike, that the fast
/// server's fast path took it exactly when `fast`, and that the other's never did.
async fn compare(fast: &mut Side, slow: &mut Side, request: Request, expect_fast: bool) -> Value {
    let before = fast.h.server.fast_create_answers();
    let a = send(fast, &request).await;
    let taken = fast.h.server.fast_create_answers() - before;
    assert_eq!(taken, u64::from(expect_fast), "fast path taken {taken} times for {}: {a:?}", request.body);
    let b = send(slow, &request).await;
    assert_eq!(slow.h.server.fast_create_answers(), 0, "the server with the fast path off took none");
    assert_eq!(a, b, "fast path and rmcp differ for {}", request.body);
    assert_eq!(fast.rows().await, slow.rows().await, "stored tasks differ after {}", request.body);
    serde_json::from_str(&a.body).unwrap_or(Value::String(a.body.clone()))
}

#[tokio::test]
async fn the_fast_path_creates_as_rmcp_does() {
    // No exporting layer on this thread (`client_traceparent` installs a
    // global one): with one, each task stores its creating request's own
    // span, a fresh random id on either path; without, the client's.
    let _off = tracing::subscriber::set_default(tracing_subscriber::registry());
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(1_800_000_000)));
    let mut fast = Side::start(clock.clone(), true).await;
    let mut slow = Side::start(clock, false).await;
    let (f, s) = (&mut fast, &mut slow);

    // A plain creation.
    let r = compare(f, s, call("slow_compute", json!({"seconds": 600}), "tok-alice"), true).await;
    assert_eq!(
        (r["result"]["resultType"].clone(), r["result"]["taskId"].clone()),
        (json!("task"), json!("<task-0>")),
        "{r}"
    );
    // Another principal's, with a string request id and no arguments at all.
    let mut bare = call("slow_compute", json!({}), "tok-bob");
    bare.body["id"] = json!("req-9");
    bare.body["params"].as_object_mut().unwrap().remove("arguments");
    let r = compare(f, s, bare, true).await;
    assert_eq!((r["id"].clone(), r["result"]["taskId"].clone()), (json!("req-9"), json!("<task-1>")), "{r}");

    // An idempotency key: the repeat answers alike with the same task; the
    // key with other arguments is refused.
    let keyed = |seconds: u64| {
        call("slow_compute", json!({"seconds": seconds}), "tok-alice").meta(IDEMPOTENCY_KEY_META_KEY, json!("order-17"))
    };
    let first = compare(f, s, keyed(600), true).await;
    let again = compare(f, s, keyed(600), true).await;
    assert_eq!(first, again);
    assert_eq!(first["result"]["taskId"], "<task-2>", "{first}");
    let r = compare(f, s, keyed(601), true).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(fast.rows().await.len(), 3, "one task for the key");
    let (f, s) = (&mut fast, &mut slow);

    // The client's trace context in `_meta` is stored with the task.
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let traced = call("slow_compute", json!({"seconds": 600}), "tok-alice").meta("traceparent", json!(traceparent));
    compare(f, s, traced, true).await;
    let rows = f.rows().await;
    assert_eq!(rows[3][5], traceparent, "{rows:?}");

    // Arguments against the schema: an untyped tool's (the runtime's check)
    // and a typed tool's (decoded before creation); then a good typed call.
    let r = compare(f, s, call("slow_compute", json!({"seconds": -1}), "tok-alice"), true).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = compare(f, s, call("batch", json!({"count": 50}), "tok-alice"), true).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = compare(f, s, call("batch", json!({"count": 2, "colour": "red"}), "tok-alice"), true).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = compare(f, s, call("batch", json!({"count": 2}), "tok-alice"), true).await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");

    // What the fast path leaves to rmcp, answered alike all the same.
    // An unknown tool; the handler's own tool; a durable tool's front.
    compare(f, s, call("no_such_tool", json!({}), "tok-alice"), false).await;
    let r = compare(f, s, call("test_simple_text", json!({}), "tok-alice"), false).await;
    assert!(r["result"]["content"].is_array(), "{r}");
    compare(f, s, call("test_tool_with_task", json!({}), "tok-alice"), false).await;
    // A durable tool mapping an argument to a header rmcp checks: with the
    // argument and without its header (refused), and without either.
    let r = compare(f, s, call("regional", json!({"region": "eu"}), "tok-alice"), false).await;
    assert_eq!(r["error"]["code"], -32020, "{r}");
    compare(f, s, call("regional", json!({}), "tok-alice"), false).await;
    // An unknown token: the guard refuses it.
    let r = compare(f, s, call("slow_compute", json!({}), "tok-eve"), false).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // A client that did not declare the tasks extension: -32021 for a
    // task-required tool (a task-optional one would run inline).
    let mut plain = call("multi_input", json!({}), "tok-alice");
    plain.body["params"]["_meta"] = request_meta(false);
    let r = compare(f, s, plain, false).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    // Unusual headers: an extra one, a mismatched or missing Mcp-Name, a
    // Base64 one, another protocol version, an Accept with weights.
    let unusual = || call("slow_compute", json!({"seconds": 600}), "tok-alice");
    compare(f, s, unusual().header("X-Extra", "1"), false).await;
    let r = compare(f, s, unusual().header("Mcp-Name", "failing_job"), false).await;
    assert_eq!(r["error"]["code"], -32020, "{r}");
    let mut unnamed = unusual();
    unnamed.headers.retain(|(n, _)| *n != "Mcp-Name");
    compare(f, s, unnamed, false).await;
    compare(f, s, unusual().header("Mcp-Name", "=?base64?c2xvd19jb21wdXRl?="), false).await;
    compare(f, s, unusual().header("MCP-Protocol-Version", "2025-11-25"), false).await;
    compare(f, s, unusual().header("Accept", "application/json;q=1, text/event-stream"), false).await;
    // Unusual bodies: an unknown `_meta` key, MRTR state, an extra member,
    // a non-string idempotency key.
    compare(f, s, unusual().meta("progressToken", json!(1)), false).await;
    let mut mrtr = unusual();
    mrtr.body["params"]["requestState"] = json!("opaque");
    compare(f, s, mrtr, false).await;
    let mut extra = unusual();
    extra.body["params"]["task"] = json!({"ttl": 1000});
    compare(f, s, extra, false).await;
    // Bodies the guard's envelope check refuses (the fast path runs before
    // it): a fractional id (rmcp alone would read `1.0` as 1), `jsonrpc`
    // spelled with an escape, a repeated member.
    let mut float_id = unusual();
    float_id.body["id"] = json!(1.0);
    let r = compare(f, s, float_id, false).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    for (from, to) in [("\"2.0\"", "\"\\u0032.0\""), ("\"id\":3", "\"id\":3,\"id\":4")] {
        let mut odd = unusual();
        odd.raw = Some(odd.body.to_string().replacen(from, to, 1));
        assert_ne!(odd.raw.as_deref(), Some(odd.body.to_string().as_str()));
        let r = compare(f, s, odd, false).await;
        assert_eq!(r["error"]["code"], -32600, "{r}");
    }
    // The envelope or its params written as an array of their members'
    // values: serde's derive would read either as the struct, the envelope
    // check refuses both (an array at the top is a batch).
    let positional = |body: &Value| {
        let p = &body["params"];
        let params = json!([p["name"], p["arguments"], p["_meta"]]);
        (
            json!([body["jsonrpc"], body["id"], body["method"], p.clone()]),
            json!({
                "jsonrpc": body["jsonrpc"], "id": body["id"], "method": body["method"], "params": params,
            }),
        )
    };
    let (whole, params) = positional(&unusual().body);
    for body in [whole, params] {
        let mut odd = unusual();
        odd.raw = Some(body.to_string());
        let r = compare(f, s, odd, false).await;
        assert!(r["error"]["code"] == -32600 || r["error"]["code"] == -32602, "{r}");
    }
    // A key no store would keep alike (not a string, a NUL byte, too long)
    // is refused by both paths alike, naming the key; nothing is stored.
    let before = f.rows().await.len();
    for key in [json!(17), json!("bad\u{0}key"), json!("k".repeat(256))] {
        let r = compare(f, s, unusual().meta(IDEMPOTENCY_KEY_META_KEY, key), true).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(r["error"]["message"].as_str().unwrap().contains(IDEMPOTENCY_KEY_META_KEY), "{r}");
    }
    assert_eq!(f.rows().await.len(), before, "a refused key creates nothing");

    // Every creation either path made matches, task for task.
    let rows = fast.rows().await;
    assert_eq!(rows, slow.rows().await);
    assert!(rows.len() >= 8, "{rows:?}");
    let principals: HashMap<String, usize> = rows.iter().fold(HashMap::new(), |mut m, r| {
        *m.entry(r[3].as_str().unwrap_or("-").to_owned()).or_default() += 1;
        m
    });
    assert_eq!(principals.get("bob"), Some(&1), "{rows:?}");
    fast.h.stop().await;
    slow.h.stop().await;
}
