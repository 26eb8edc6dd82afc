//! The database file deleted under a running `mcp-tasks serve`: a creation
//! gets a JSON-RPC error naming the file, never a task handle that would be
//! lost with the deleted file.

use crate::serve_support;
use mcp_tasks_client::{ClientError, ClientOptions, DeclineAll, Silent, Started, TasksClient};
use serde_json::json;
use serve_support::spawn;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_creation_after_the_file_was_deleted_is_an_error_not_a_task() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut server = spawn(&db, "127.0.0.1:0", &["--shutdown-grace", "1s"]);
    let client = TasksClient::connect(ClientOptions::new(&server.url)).await.unwrap();
    let before = client.start("slow_compute", json!({"ms": 1}), &DeclineAll, &Silent).await.unwrap();
    assert!(matches!(before, Started::Task(_)), "{before:?}");

    std::fs::remove_file(&db).unwrap();

    match client.start("slow_compute", json!({"ms": 1}), &DeclineAll, &Silent).await {
        Err(ClientError::Rpc { method, code, message, .. }) => {
            assert_eq!(method, "tools/call");
            assert_eq!(code, -32603, "{message}");
            assert!(message.contains(&db.display().to_string()) && message.contains("deleted"), "{message}");
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }

    server.terminate();
    server.child.wait().unwrap();
}
