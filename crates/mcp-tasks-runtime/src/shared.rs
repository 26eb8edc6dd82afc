//! The state every part of one runtime shares (behind the `Runtime`'s `Arc`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_core::{Classifier, Clock, Policy, RandomSource, TaskId, TaskRecord, Timestamp};
use mcp_tasks_store::{Quota, TaskStore};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;
use crate::hints::Hints;
use mcp_tasks_store::PollBuffer;
use crate::running::Running;
use crate::tool::{TaskTool, ToolSpec};
use crate::view::TaskView;
use crate::wakeups::Wakeups;

/// A registered tool and its declaration.
pub(crate) struct RegisteredTool {
    pub(crate) tool: Arc<dyn TaskTool>,
    pub(crate) spec: ToolSpec,
    /// `spec.input_schema`, compiled once at build.
    pub(crate) arguments: crate::schema::CompiledSchema,
}

pub(crate) struct Shared {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) policy: Policy,
    pub(crate) classifier: Classifier,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) tools: BTreeMap<String, RegisteredTool>,
    pub(crate) concurrency: usize,
    /// Executor slots: `concurrency` permits, one held by each handler
    /// while it executes (not while it waits for input).
    pub(crate) slots: Arc<Semaphore>,
    /// Most handlers kept waiting for input beyond the executing ones.
    pub(crate) max_waiting: usize,
    /// Numbers this runtime's claims: a claim's lease holder is
    /// `{owner}/{number}`.
    pub(crate) claims: AtomicU64,
    pub(crate) single_node: bool,
    pub(crate) claim_interval: Duration,
    /// What one principal may hold; every creation carries it to the store.
    pub(crate) quota: Quota,
    pub(crate) rng: Mutex<Box<dyn RandomSource>>,
    /// This executor's id, unique per runtime; each of its claims holds its
    /// leases as `{owner}/{claim number}`.
    pub(crate) owner: String,
    /// When this runtime was built: the orphan sweep's silence floor.
    pub(crate) started_at: Timestamp,
    pub(crate) polls: PollBuffer,
    pub(crate) hints: Hints,
    pub(crate) running: Running,
    pub(crate) wakeups: Wakeups,
    /// Standing in the maintenance election.
    pub(crate) leader: crate::leader::Leader,
    /// Set by shutdown: no more claims, no new tasks.
    pub(crate) stopping: AtomicBool,
    pub(crate) started: AtomicBool,
    /// Stops the background loops.
    pub(crate) background_stop: CancellationToken,
    pub(crate) background: Mutex<Vec<JoinHandle<()>>>,
    /// Serialises claims so concurrent `run_due_once` calls respect `concurrency`.
    pub(crate) claim_lock: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("owner", &self.owner)
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The last handle is gone: stop the timers promptly.
        self.background_stop.cancel();
    }
}

/// How many times a read → decide → apply cycle is retried after losing a race.
pub(crate) const MAX_CAS_RETRIES: usize = 16;

impl Shared {
    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// A lease holder name for a new claim, never used before by anyone.
    pub(crate) fn next_holder(&self) -> String {
        format!("{}/{}", self.owner, self.claims.fetch_add(1, Ordering::SeqCst) + 1)
    }

    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Reads a task the caller may see: another principal's task is
    /// reported exactly like a missing one.
    pub(crate) async fn read_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<TaskRecord, RuntimeError> {
        self.store.get_visible(id, principal).await?.ok_or_else(|| RuntimeError::TaskNotFound(id.clone()))
    }

    /// The wire view of `record`.
    pub(crate) async fn view(&self, record: TaskRecord) -> TaskView {
        let retention = &self.policy.retention;
        TaskView {
            ttl_ms: retention.ttl_ms(&record),
            poll_interval_ms: self.hints.poll_interval_ms(&record.tool, self.store.as_ref(), self.now()).await,
            orphan_window_ms: u64::try_from(retention.orphan_after.as_millis()).unwrap_or(u64::MAX),
            record,
        }
    }

    pub(crate) fn next_random(&self) -> std::sync::MutexGuard<'_, Box<dyn RandomSource>> {
        self.rng.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Shared {
    /// Applies one guarded update and returns its outcome.
    pub(crate) async fn apply_one(
        &self,
        update: mcp_tasks_store::GuardedUpdate,
    ) -> Result<mcp_tasks_store::UpdateOutcome, RuntimeError> {
        let mut outcomes = self.store.apply(vec![update]).await?;
        Ok(outcomes.pop().unwrap_or(mcp_tasks_store::UpdateOutcome::NotFound))
    }
}
