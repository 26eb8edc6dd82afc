//! `GET /healthz` answers while the process serves; `GET /readyz` answers
//! 200 while the store is healthy and 503 with the cause when it is not.
//! Neither needs a bearer token nor passes the Host/Origin checks of `/mcp`.

use crate::common;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use common::*;
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
impl StoreWrapper for SwitchableStore {
    fn inner(&self) -> &dyn TaskStore {
        &self.inner
    }
    async fn health(&self) -> Result<(), StoreError> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(StoreError::Unavailable("the database file was deleted".to_owned()));
        }
        Ok(())
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
