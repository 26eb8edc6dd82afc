//! The background loops `start` spawns, one per pass (each pass's file owns
//! its loop; see [`maintenance`](crate::maintenance)), and their stop. Loops
//! hold only their own pass: a runtime dropped without `shutdown` stops them
//! (its drop fires the stop token), so it does not live on in its timers.

use std::sync::Mutex;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The running loops and the token that stops them.
#[derive(Debug, Default)]
pub(crate) struct Background {
    stop: CancellationToken,
    loops: Mutex<Vec<JoinHandle<()>>>,
}

impl Background {
    /// The token every loop stops on.
    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Keeps `handle` to wait for at [`stop_and_join`](Self::stop_and_join).
    pub(crate) fn keep(&self, handle: JoinHandle<()>) {
        self.loops.lock().unwrap_or_else(|p| p.into_inner()).push(handle);
    }

    /// Tells every loop to stop (at its next wait).
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Stops every loop and waits until each has returned.
    pub(crate) async fn stop_and_join(&self) {
        self.stop();
        let loops: Vec<_> = self.loops.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        for handle in loops {
            let _ = handle.await;
        }
    }
}
