//! `mcp-tasks serve --max-tasks-per-principal`: the flag reaches the store;
//! a creation past it is a `-32050` JSON-RPC error, not a task.

use crate::serve_support;
use mcp_tasks_client::{ClientError, ClientOptions, DeclineAll, Silent, Started, TasksClient};
use serde_json::json;
use serve_support::spawn;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_serve_flag_caps_what_a_principal_stores() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut server = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s", "--max-tasks-per-principal", "1"]);
    let client = TasksClient::connect(ClientOptions::new(&server.url)).await.unwrap();
    let first = client.start("slow_compute", json!({"ms": 1}), &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(first, Started::Task(_)), "{first:?}");
    match client.start("slow_compute", json!({"ms": 1}), &DeclineAll, &Silent).await {
        Err(ClientError::Rpc { code, message, .. }) => {
            assert_eq!(code, -32050, "{message}");
            assert!(message.contains("anonymous principal") && message.contains("limit of 1 stored tasks"), "{message}");
        }
        other => panic!("expected a quota error, got {other:?}"),
    }
    server.terminate();
    assert!(server.child.wait().unwrap().success());
}
