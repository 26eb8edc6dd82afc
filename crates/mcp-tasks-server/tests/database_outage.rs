//! Losing the PostgreSQL database while serving: requests get `-32603`
//! saying the store is unavailable (never hang, never another code), the
//! server keeps serving, and once the database is back the same task is
//! there and everything works again.

use crate::common;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_tasks_postgres::testing::{CutProxy, TestDatabase};
use mcp_tasks_postgres::{PostgresOptions, PostgresStore};
use mcp_tasks_server::TaskServer;
use mcp_tasks_server::tools::ToolSet;
use rmcp::model::ErrorCode;
use serde_json::json;
use tokio::net::TcpListener;

/// A `-32603` whose message says the store is unavailable.
fn assert_unavailable(what: &str, e: &rmcp::model::ErrorData) {
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{what}: {e:?}");
    assert!(e.message.contains("database is unavailable"), "{what}: the message says so: {}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_during_an_outage_get_an_internal_error_saying_the_store_is_unavailable() {
    let Some(db) = TestDatabase::create().await else { return };
    let url = db.url();
    let Some((cut, proxied)) = CutProxy::in_front_of(&url).await else { return };
    let options = PostgresOptions {
        connect_timeout: Duration::from_secs(2),
        wait_timeout: Duration::from_secs(2),
        ..PostgresOptions::default()
    };
    let store = Arc::new(PostgresStore::open_with(&proxied, options).await.expect("open"));
    let server = ToolSet::Demo.register(TaskServer::builder(store)).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async move {
        let _ = stopped.await;
    }));
    let c = client(&endpoint).await;
    let before = create(&c, "long_running_report", json!({"topic": "outage", "sections": 50})).await;
    let id = before.task.task_id.clone();

    cut.down();
    let bound = Duration::from_secs(30);
    let e = tokio::time::timeout(bound, call(&c, "long_running_report", json!({"topic": "x", "sections": 1})))
        .await
        .expect("tools/call answers promptly")
        .expect_err("no task can be created without the database");
    assert_unavailable("tools/call", &e);
    let e = tokio::time::timeout(bound, get(&c, &id)).await.expect("tasks/get answers promptly").unwrap_err();
    assert_unavailable("tasks/get", &e);

    cut.up();
    let deadline = tokio::time::Instant::now() + bound;
    let got = loop {
        match get(&c, &id).await {
            Ok(got) => break got,
            Err(e) => assert_unavailable("tasks/get while reconnecting", &e),
        }
        assert!(tokio::time::Instant::now() < deadline, "the store never came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(got.task.task.task_id, id, "the acknowledged task survived the outage");
    create(&c, "long_running_report", json!({"topic": "after", "sections": 1})).await;
    let _ = stop.send(());
    let _ = serving.await;
}
