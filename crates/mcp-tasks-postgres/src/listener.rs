//! The store's event source: one dedicated connection that `LISTEN`s on the
//! schema's channel and turns notifications into [`StoreEvent`]s.
//!
//! The `NOTIFY`s come from triggers (schema versions 4 and 8), inside the writing
//! transaction, so an event is heard only after its change committed. The
//! connection is not pooled (a pooled one would be handed to queries and
//! lose its `LISTEN`). When it breaks, the listener reconnects by itself
//! with a capped backoff; on every (re)connect it sends
//! [`StoreEvent::Resync`], since anything announced while it was away is
//! lost.

use std::time::Duration;

use mcp_tasks_core::TaskId;
use mcp_tasks_store::StoreEvent;
use tokio::sync::{broadcast, oneshot};
use tokio_postgres::{AsyncMessage, Config, NoTls};

use crate::failure::describe;

/// Events buffered per receiver before it lags (and is told to resync).
const CAPACITY: usize = 4096;

/// First and longest pause between reconnection attempts.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

/// The channel's name for the session's schema; the triggers compute the
/// same (channels are database-wide, so the schema's tests and instances
/// never hear each other's).
const CHANNEL_SQL: &str = "SELECT 'mcp_tasks_' || md5(current_schema())";

/// A running listener; it stops when this is dropped.
#[derive(Debug)]
pub(crate) struct Listener {
    events: broadcast::Sender<StoreEvent>,
    _stop: oneshot::Sender<()>,
}

impl Listener {
    /// Starts listening on the current tokio runtime.
    pub(crate) fn start(config: Config) -> Listener {
        let (events, _) = broadcast::channel(CAPACITY);
        let (stop, stopped) = oneshot::channel();
        tokio::spawn(run(config, events.clone(), stopped));
        Listener { events, _stop: stop }
    }

    /// A new receiver of everything heard from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<StoreEvent> {
        self.events.subscribe()
    }
}

/// What a notification's payload announces.
fn event(payload: &str) -> Option<StoreEvent> {
    match payload {
        "work" => Some(StoreEvent::WorkAvailable),
        _ => payload.strip_prefix("t:").map(|id| StoreEvent::TaskChanged(TaskId::from(id))),
    }
}

async fn run(config: Config, events: broadcast::Sender<StoreEvent>, mut stopped: oneshot::Receiver<()>) {
    let mut pause = BACKOFF.0;
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            ended = listen(&config, &events, &mut pause) => {
                tracing::warn!("the store's event listener lost its connection ({ended}); reconnecting");
            }
        }
        tokio::select! {
            _ = &mut stopped => return,
            _ = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(BACKOFF.1);
    }
}

/// Aborts a spawned task when dropped, so a listener that is stopped
/// mid-connection leaves no connection behind.
struct AbortOnDrop(tokio::task::JoinHandle<String>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Connects, listens and forwards until the connection ends; returns why.
async fn listen(config: &Config, events: &broadcast::Sender<StoreEvent>, pause: &mut Duration) -> String {
    let (client, mut connection) = match config.connect(NoTls).await {
        Ok(pair) => pair,
        Err(e) => return describe(&e),
    };
    let forward = events.clone();
    // The connection makes progress (our queries included) only while polled.
    let mut driver = AbortOnDrop(tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if let Some(e) = event(n.payload()) {
                        // No receiver right now is fine: nobody is waiting.
                        let _ = forward.send(e);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return describe(&e),
                None => return "the server closed it".to_owned(),
            }
        }
    }));
    let subscribed = async {
        let channel: String = client.query_one(CHANNEL_SQL, &[]).await?.try_get(0)?;
        client.batch_execute(&format!("LISTEN \"{channel}\"")).await
    };
    if let Err(e) = subscribed.await {
        return describe(&e);
    }
    *pause = BACKOFF.0;
    // Whatever was announced before this LISTEN went unheard.
    let _ = events.send(StoreEvent::Resync);
    let why = (&mut driver.0).await.unwrap_or_else(|e| e.to_string());
    drop(client);
    why
}
