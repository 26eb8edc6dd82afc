//! [`DatabaseClock`]: the database server's time, read without a round trip.
//!
//! Instances of a fleet run on machines whose clocks differ. A lease written
//! by one instance (`expires_at = now + lease`) and judged by another
//! (`expires_at <= now`) is only meaningful if both read one clock, so every
//! instance on PostgreSQL takes "now" from the database server: it samples
//! `clock_timestamp()` now and then, keeps the offset from a local clock,
//! and adds it to the local clock's reading. Between samples the local clock
//! measures elapsed time, which clocks do well even when their absolute
//! setting is off.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use deadpool_postgres::{GenericClient, Pool};
use mcp_tasks_core::{Clock, Timestamp};
use mcp_tasks_store::StoreError;
use tokio::task::JoinHandle;

use crate::failure::Failure;

/// How often [`DatabaseClock::spawn_refresher`] samples by default: a
/// drift of 100 ppm (a poor quartz clock) moves the offset by 3 ms in that
/// time.
pub const DEFAULT_CLOCK_REFRESH: Duration = Duration::from_secs(30);

/// Samples per refresh; the one with the shortest round trip is kept, as
/// its midpoint is the best estimate of when the server read its clock.
const SAMPLES: usize = 3;

/// The database server's clock as seen from this process: a local clock
/// plus an offset measured against PostgreSQL's `clock_timestamp()`.
///
/// Never goes backwards: after a refresh that moves the offset back, `now`
/// holds still until the corrected time catches up.
#[derive(Debug)]
pub struct DatabaseClock {
    local: Arc<dyn Clock>,
    pool: Pool,
    /// Database time minus local time, in milliseconds.
    offset_ms: AtomicI64,
    /// The latest instant handed out (monotonicity).
    last_ms: AtomicI64,
}

impl DatabaseClock {
    /// A clock over `local`, sampled once against the database before it
    /// is returned.
    pub(crate) async fn sampled(pool: Pool, local: Arc<dyn Clock>) -> Result<Arc<Self>, StoreError> {
        let clock = Arc::new(DatabaseClock { local, pool, offset_ms: AtomicI64::new(0), last_ms: AtomicI64::new(i64::MIN) });
        clock.refresh().await?;
        Ok(clock)
    }

    /// Samples the database's clock again and updates the offset. Returns
    /// the round trip of the kept sample: the offset's error is at most
    /// half of it (plus the server's clock resolution).
    pub async fn refresh(&self) -> Result<Duration, StoreError> {
        let (offset, rtt) = self.measure().await.map_err(Failure::into_store)?;
        self.offset_ms.store(offset, Ordering::SeqCst);
        Ok(Duration::from_millis(rtt.max(0) as u64))
    }

    /// Database time minus local time, as last measured.
    pub fn offset(&self) -> Duration {
        Duration::from_millis(self.offset_ms.load(Ordering::SeqCst).unsigned_abs())
    }

    /// Whether the database's clock is ahead of the local one.
    pub fn database_is_ahead(&self) -> bool {
        self.offset_ms.load(Ordering::SeqCst) > 0
    }

    /// (offset, round trip) of the best of [`SAMPLES`] samples, in ms.
    async fn measure(&self) -> Result<(i64, i64), Failure> {
        let client = self.pool.get().await?;
        let stmt = client.prepare_cached("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint").await?;
        let mut best: Option<(i64, i64)> = None;
        for _ in 0..SAMPLES {
            let before = self.local.now().as_millis();
            let server: i64 = client.query_one(&stmt, &[]).await?.try_get(0)?;
            let after = self.local.now().as_millis();
            let rtt = after - before;
            let offset = server - (before + rtt / 2);
            if best.is_none_or(|(_, r)| rtt < r) {
                best = Some((offset, rtt));
            }
        }
        Ok(best.unwrap_or((0, 0)))
    }

    /// Refreshes every `every` on the current tokio runtime until the clock
    /// is dropped. A failed refresh keeps the last offset (the local clock
    /// still measures elapsed time) and is logged.
    pub fn spawn_refresher(self: &Arc<Self>, every: Duration) -> JoinHandle<()> {
        let weak: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(clock) = weak.upgrade() else { return };
                if let Err(e) = clock.refresh().await {
                    tracing::debug!(error = %e, "cannot sample the database's clock; keeping the last offset");
                }
            }
        })
    }
}

impl Clock for DatabaseClock {
    fn now(&self) -> Timestamp {
        let corrected = self.local.now().as_millis().saturating_add(self.offset_ms.load(Ordering::SeqCst));
        let previous = self.last_ms.fetch_max(corrected, Ordering::SeqCst);
        Timestamp::from_millis(previous.max(corrected))
    }
}
