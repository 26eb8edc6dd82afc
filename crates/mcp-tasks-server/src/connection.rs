//! Serving HTTP/1 connections with bounds: a connection limit on accept, and
//! a watchdog per connection that closes it when a request head does not
//! arrive in time or it sits idle too long.
//!
//! hyper's own header timer starts whenever hyper waits for a request head,
//! so it cannot tell a slow head from an idle keep-alive connection; the
//! watchdog here can, because it sees both the bytes (a [`WatchedStream`]
//! around the socket) and the requests (a guard held by each response body).
//! Body reads are bounded by the guard's body timeout.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::limits::ConnectionLimits;
use crate::log_limit::RateLimitedWarning;

/// "Connection limit reached" is warned about at most this often.
static LIMIT_WARNING: RateLimitedWarning = RateLimitedWarning::new(Duration::from_secs(60));
/// Accept errors (out of descriptors, …) are warned about at most this often.
static ACCEPT_WARNING: RateLimitedWarning = RateLimitedWarning::new(Duration::from_secs(10));

/// Accepts connections on `listener` until `stop` is cancelled, serving each
/// with `router` under `limits`; then asks every open connection to finish
/// its request and close, and waits for them at most `grace`.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
    grace: Duration,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let connections = TaskTracker::new();
    loop {
        // Beyond the limit, stop accepting: new connections wait in the
        // kernel's backlog (no descriptor spent) and are served as soon as
        // the timeouts free a slot. Accepting only to close would spend a
        // descriptor per attempt and answer nothing.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                LIMIT_WARNING.warn(|skipped| {
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        times_since_last_warning = skipped,
                        "connection limit reached; new connections wait until one closes"
                    );
                });
                tokio::select! {
                    slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
                    () = stop.cancelled() => break,
                }
            }
        };
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    ACCEPT_WARNING.warn(|skipped| tracing::warn!(error = %e, errors_since_last_warning = skipped, "accept failed"));
                    // Out of descriptors, typically: give closing connections a moment.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        // Without TCP_NODELAY every chunked reply waits for the peer's delayed ACK (~40 ms).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let router = router.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            serve_one(stream, router, limits, stop).await;
            drop(slot);
        });
    }
    drop(listener);
    connections.close();
    if tokio::time::timeout(grace, connections.wait()).await.is_err() {
        tracing::info!("connections still open after the grace period are closed");
    }
}

/// Serves one connection until it closes, its watchdog expires, or (after
/// `stop`) its current request is answered.
async fn serve_one(stream: TcpStream, router: Router, limits: ConnectionLimits, stop: CancellationToken) {
    let watch = Arc::new(Watch::new(limits));
    let io = TokioIo::new(WatchedStream { inner: stream, watch: watch.clone() });
    let service_watch = watch.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let request_guard = service_watch.request_started();
        let router = router.clone();
        async move {
            let response = router.oneshot(request.map(Body::new)).await?;
            // The request counts as in progress until its body has been sent.
            Ok::<_, std::convert::Infallible>(response.map(move |body| {
                body.map_frame(move |frame| {
                    let _ = &request_guard;
                    frame
                })
            }))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The watchdog does hyper's header timing (see the module comment).
    builder.header_read_timeout(None);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let mut stopping = false;
    loop {
        let deadline = watch.deadline();
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            () = sleep_until(deadline) => {
                if let Some(reason) = watch.expired(Instant::now()) {
                    tracing::debug!(reason, "closing a connection");
                    return;
                }
            }
            () = watch.changed.notified() => {}
            () = stop.cancelled(), if !stopping => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// What the watchdog knows about one connection.
struct Watch {
    limits: ConnectionLimits,
    state: Mutex<WatchState>,
    /// Signalled whenever the deadline may have moved.
    changed: Notify,
}

struct WatchState {
    /// Requests whose response has not been sent in full.
    in_flight: usize,
    /// When the connection went idle (accepted, or its last response sent).
    idle_since: Instant,
    /// When the first byte of the next request head arrived, if one did.
    head_started: Option<Instant>,
    /// Since when a write has been waiting for the peer to read.
    write_blocked_since: Option<Instant>,
}

impl Watch {
    fn new(limits: ConnectionLimits) -> Self {
        let now = Instant::now();
        Watch {
            limits,
            // A fresh connection is expected to send a request: the header timeout runs from accept.
            state: Mutex::new(WatchState {
                in_flight: 0,
                idle_since: now,
                head_started: Some(now),
                write_blocked_since: None,
            }),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When the connection must be closed if nothing changes.
    fn deadline(&self) -> Option<Instant> {
        let state = self.lock();
        let stalled_write = state.write_blocked_since.map(|since| since + self.limits.idle_timeout);
        let waiting = if state.in_flight > 0 {
            None // the body timeout and the handlers bound a request in progress
        } else if let Some(started) = state.head_started {
            Some(started + self.limits.header_timeout)
        } else {
            Some(state.idle_since + self.limits.idle_timeout)
        };
        match (stalled_write, waiting) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Why the connection must close now, if it must.
    fn expired(&self, now: Instant) -> Option<&'static str> {
        let deadline = self.deadline()?;
        if now < deadline {
            return None;
        }
        let state = self.lock();
        Some(if state.write_blocked_since.is_some_and(|since| now >= since + self.limits.idle_timeout) {
            "the peer stopped reading the response"
        } else if state.head_started.is_some() {
            "no complete request head within the header timeout"
        } else {
            "idle past the idle timeout"
        })
    }

    fn on_read(&self) {
        let mut state = self.lock();
        if state.in_flight == 0 && state.head_started.is_none() {
            state.head_started = Some(Instant::now());
            drop(state);
            self.changed.notify_one();
        }
    }

    fn on_write(&self, blocked: bool) {
        let mut state = self.lock();
        let was_blocked = state.write_blocked_since.is_some();
        if blocked && !was_blocked {
            state.write_blocked_since = Some(Instant::now());
        } else if !blocked && was_blocked {
            state.write_blocked_since = None;
        } else {
            return;
        }
        drop(state);
        self.changed.notify_one();
    }

    fn request_started(self: &Arc<Self>) -> RequestGuard {
        let mut state = self.lock();
        state.in_flight += 1;
        state.head_started = None;
        drop(state);
        self.changed.notify_one();
        RequestGuard(self.clone())
    }
}

/// Held by a response body; its drop ends the request.
struct RequestGuard(Arc<Watch>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.in_flight -= 1;
        if state.in_flight == 0 {
            state.idle_since = Instant::now();
        }
        drop(state);
        self.0.changed.notify_one();
    }
}

/// The socket, reporting reads and blocked writes to the watchdog.
struct WatchedStream {
    inner: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for WatchedStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.watch.on_read();
        }
        polled
    }
}

impl AsyncWrite for WatchedStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        self.watch.on_write(polled.is_pending());
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch.on_write(polled.is_pending());
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
