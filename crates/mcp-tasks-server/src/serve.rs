//! Serving a [`TaskServer`] on a TCP listener until a shutdown signal.

use std::future::Future;

use axum::serve::ListenerExt;
use tokio::net::TcpListener;

use crate::builder::{ServerError, TaskServer};

impl TaskServer {
    /// Starts the runtime, serves the MCP endpoint on `listener` until
    /// `shutdown` resolves, then shuts down gracefully: no new requests,
    /// in-flight ones drain (bounded by the grace period), running handlers
    /// finish within the grace period or release their leases.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        self.start().await?;
        // axum leaves Nagle on; with chunked replies every response would
        // wait for the peer's delayed ACK (~40 ms).
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
        });
        let stop = self.stop.clone();
        let signalled = stop.clone();
        let http = axum::serve(listener, self.router())
            .with_graceful_shutdown(async move {
                shutdown.await;
                signalled.cancel();
            })
            .into_future();
        tokio::pin!(http);
        let outcome = tokio::select! {
            outcome = &mut http => outcome,
            // Signalled: give in-flight requests the grace period to drain.
            _ = async {
                stop.cancelled().await;
                tokio::time::sleep(self.shutdown_grace).await;
            } => Ok(()),
        };
        self.shutdown().await;
        Ok(outcome?)
    }
}
