//! The maintenance leader on PostgreSQL: a lease row, won and kept by one
//! guarded upsert.
//!
//! Why a lease row and not a session advisory lock: an advisory lock lives
//! as long as its connection, so a leader that is paused (SIGSTOP, a long
//! GC-like stall) or cut off without its TCP connection closing keeps it
//! until the server's keepalive gives up — hours by default — and nobody
//! sweeps meanwhile. A lease lapses at an instant everyone judges on the
//! same (database) clock, so another instance takes over within the lease
//! whatever happened to the leader, and tests can drive it with a manual
//! clock. A paused leader that wakes up after losing its term may run one
//! sweep it no longer should: harmless, as every sweep is a guarded
//! compare-and-set.

use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Pool};
use mcp_tasks_core::Timestamp;
use mcp_tasks_store::{Leadership, StoreError};

use crate::failure::Failure;

/// Wins a free or lapsed term, or extends our own; returns a row only if
/// `$1` leads afterwards. The row lock of the upsert serialises candidates.
const CAMPAIGN_SQL: &str = "INSERT INTO maintenance_leader AS l (singleton, holder, term, expires_at) \
     VALUES (true, $1, 1, $3) \
     ON CONFLICT (singleton) DO UPDATE SET holder = $1, expires_at = $3, \
       term = CASE WHEN l.holder = $1 THEN l.term ELSE l.term + 1 END \
     WHERE l.holder = $1 OR l.expires_at <= $2 \
     RETURNING term";

/// Ends `$1`'s term now (the lowest instant: lapsed on any clock).
const RESIGN_SQL: &str = "UPDATE maintenance_leader SET expires_at = -9223372036854775808 WHERE holder = $1";

/// [`Leadership`] by a lease row in the schema.
#[derive(Debug, Clone)]
pub(crate) struct LeaseLeadership {
    pool: Pool,
}

impl LeaseLeadership {
    pub(crate) fn new(pool: Pool) -> Self {
        LeaseLeadership { pool }
    }
}

#[async_trait]
impl Leadership for LeaseLeadership {
    async fn campaign(&self, candidate: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError> {
        let run = async {
            let client = self.pool.get().await?;
            let stmt = client.prepare_cached(CAMPAIGN_SQL).await?;
            let won = client.query_opt(&stmt, &[&candidate, &now.as_millis(), &until.as_millis()]).await?;
            Ok::<bool, Failure>(won.is_some())
        };
        run.await.map_err(Failure::into_store)
    }

    async fn resign(&self, candidate: &str) -> Result<(), StoreError> {
        let run = async {
            let client = self.pool.get().await?;
            client.execute(RESIGN_SQL, &[&candidate]).await?;
            Ok::<(), Failure>(())
        };
        run.await.map_err(Failure::into_store)
    }
}
