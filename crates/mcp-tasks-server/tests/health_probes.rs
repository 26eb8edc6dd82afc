//! `GET /healthz` answers while the process serves; `GET /readyz` answers
//! 200 while the store is healthy and 503 with the cause when it is not.
//! Neither needs a bearer token nor passes the Host/Origin checks of `/mcp`.

use crate::common;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use common::*;
use mcp_tasks_core::{TaskId, TaskRecord, TaskStatus, Timestamp};
use mcp_tasks_server::{TaskServer, TokenMap};
use mcp_tasks_store::*;
use serde_json::Value;

/// A memory store whose health can be switched off.
#[derive(Debug, Default)]
struct SwitchableStore {
    inner: MemoryStore,
    broken: AtomicBool,
}

#[async_trait]
impl TaskStore for SwitchableStore {
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        self.inner.create(new).await
    }
    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        self.inner.get(id).await
    }
    async fn health(&self) -> Result<(), StoreError> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(StoreError::Unavailable("the database file was deleted".to_owned()));
        }
        Ok(())
    }
    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        self.inner.record_polls(polls).await
    }
    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner.claim(params).await
    }
    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        self.inner.apply(updates).await
    }
    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.inner.attempts(id).await
    }
    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner.sweep_candidates(query).await
    }
    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner.list(query).await
    }
    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        self.inner.count_by_status().await
    }
    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        self.inner.count_by_status_and_tool().await
    }
    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        self.inner.recent_durations(tool, limit).await
    }
    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        self.inner.list_dead_letters(query).await
    }
    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        self.inner.get_dead_letter(task).await
    }
    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        self.inner.requeue_dead_letter(task, new).await
    }
    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError> {
        self.inner.purge_dead_letters(query).await
    }
}

async fn probe(base: &str, path: &str, host: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().get(format!("{base}{path}"));
    if let Some(host) = host {
        request = request.header("Host", host).header("Origin", "http://evil.example");
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, serde_json::from_str(&response.text().await.unwrap()).unwrap())
}

#[tokio::test]
async fn probes_report_liveness_and_the_stores_readiness_without_credentials() {
    let store = Arc::new(SwitchableStore::default());
    let tokens = TokenMap::new([("secret".to_owned(), "alice".to_owned())]);
    let server = TaskServer::builder(store.clone()).auth(tokens).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async move {
        let _ = stopped.await;
    }));

    assert_eq!(probe(&base, "/healthz", None).await.0, 200);
    let (status, body) = probe(&base, "/readyz", None).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("ready")), "{body}");
    // No token, a foreign Host and Origin: the probes still answer; /mcp does not.
    assert_eq!(probe(&base, "/healthz", Some("lb.internal")).await.0, 200);
    assert_eq!(probe(&base, "/readyz", Some("lb.internal")).await.0, 200);
    assert_eq!(post_raw(&format!("{base}/mcp"), "{}", &[]).await.0, 401);

    store.broken.store(true, Ordering::SeqCst);
    let (status, body) = probe(&base, "/readyz", None).await;
    assert_eq!(status, 503, "{body}");
    assert!(body["cause"].as_str().unwrap().contains("the database file was deleted"), "{body}");
    assert_eq!(probe(&base, "/healthz", None).await.0, 200, "alive, though not ready");

    store.broken.store(false, Ordering::SeqCst);
    assert_eq!(probe(&base, "/readyz", None).await.0, 200);
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}
