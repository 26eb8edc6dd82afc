//! Serving a [`TaskServer`] on a TCP listener until a shutdown signal.

use std::future::Future;

use tokio::net::TcpListener;

use crate::builder::TaskServer;
use crate::connection::serve_connections;
use crate::fd_limit::raise_open_file_limit;
use crate::server_error::ServerError;

impl TaskServer {
    /// Starts the runtime, serves the MCP endpoint on `listener` until
    /// `shutdown` resolves, then shuts down gracefully: no new connections,
    /// in-flight requests drain (bounded by the grace period), running
    /// handlers finish within the grace period or release their leases.
    ///
    /// Connections are bounded by the [`ConnectionLimits`](crate::limits::ConnectionLimits)
    /// given to the builder. The process's soft open-file limit is raised to
    /// its hard limit first (each connection is a descriptor).
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let open_files = raise_open_file_limit();
        let limits = self.limits;
        match open_files {
            Some(open_files) if open_files < limits.max_connections as u64 + 64 => tracing::warn!(
                open_files,
                max_connections = limits.max_connections,
                "the open-file limit is lower than the connection limit plus headroom; \
                 the server may run out of descriptors before it refuses connections"
            ),
            Some(open_files) => tracing::info!(open_files, max_connections = limits.max_connections, "open-file limit"),
            None => {}
        }
        self.start().await?;
        let stop = self.stop.clone();
        let serving = serve_connections(listener, self.router(), limits, stop.clone(), self.shutdown_grace);
        tokio::pin!(serving);
        tokio::select! {
            () = &mut serving => {}
            () = shutdown => {
                // Inline waits end, then open connections get the grace period to drain.
                stop.cancel();
                serving.await;
            }
        }
        self.shutdown().await;
        Ok(())
    }
}
