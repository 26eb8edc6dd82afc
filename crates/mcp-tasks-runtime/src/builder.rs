//! [`RuntimeBuilder`]: tools, policy, clock and executor settings, checked
//! once at `build`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_core::{Classifier, Clock, Policy, PyRandom, RandomSource, SystemClock};
use mcp_tasks_store::{Quota, TaskStore};
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;
use crate::hints::Hints;
use crate::runtime::Runtime;
use crate::schema::CompiledSchema;
use crate::shared::{RegisteredTool, Shared};
use crate::tool::TaskTool;

/// Default number of handlers one runtime runs at once.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// Default number of handlers one runtime keeps waiting for input (beyond
/// the `concurrency` executing ones) before it stops claiming new work: each
/// waiting handler holds its task's memory and re-reads the store every
/// [`INPUT_RECHECK`](crate::INPUT_RECHECK).
pub const DEFAULT_MAX_WAITING: usize = 1024;

/// Default interval at which the executor looks for due tasks when nothing
/// woke it (retries coming due, tasks created by other instances).
pub const DEFAULT_CLAIM_INTERVAL: Duration = Duration::from_millis(200);

/// Default per-principal quota: 10,000 stored tasks and 256 MiB of stored
/// tool arguments per principal (the anonymous principal is one principal).
pub const DEFAULT_QUOTA: Quota =
    Quota { max_tasks: Some(10_000), max_argument_bytes: Some(256 * 1024 * 1024) };

/// Configures a [`Runtime`].
pub struct RuntimeBuilder {
    store: Arc<dyn TaskStore>,
    policy: Policy,
    clock: Arc<dyn Clock>,
    tools: Vec<Arc<dyn TaskTool>>,
    concurrency: usize,
    max_waiting: usize,
    single_node: bool,
    claim_interval: Duration,
    random: Option<Box<dyn RandomSource>>,
    quota: Quota,
    leader_lease: Duration,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("store", &self.store)
            .field("concurrency", &self.concurrency)
            .field("single_node", &self.single_node)
            .finish_non_exhaustive()
    }
}

impl RuntimeBuilder {
    pub(crate) fn new(store: Arc<dyn TaskStore>) -> Self {
        RuntimeBuilder {
            store,
            policy: Policy::default(),
            clock: Arc::new(SystemClock),
            tools: Vec::new(),
            concurrency: DEFAULT_CONCURRENCY,
            max_waiting: DEFAULT_MAX_WAITING,
            single_node: false,
            claim_interval: DEFAULT_CLAIM_INTERVAL,
            random: None,
            quota: DEFAULT_QUOTA,
            leader_lease: crate::leader::DEFAULT_LEADER_LEASE,
        }
    }

    /// The policy (validated at `build`).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The clock every decision reads (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Registers a tool.
    pub fn tool(mut self, tool: Arc<dyn TaskTool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Most handlers executing at once in this process. A handler waiting
    /// for input (in [`TaskContext::request_input`](crate::TaskContext::request_input))
    /// does not count: it gives its slot back while it waits and takes one
    /// again when answered.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n;
        self
    }

    /// Most handlers kept waiting for input besides the executing ones
    /// (default [`DEFAULT_MAX_WAITING`]); while that many wait, no new task
    /// is claimed, so memory stays bounded.
    pub fn max_waiting(mut self, n: usize) -> Self {
        self.max_waiting = n;
        self
    }

    /// Whether this is the only process on its store (embedded SQLite): at
    /// start, triage then takes every lease, since any other owner is dead.
    pub fn single_node(mut self, yes: bool) -> Self {
        self.single_node = yes;
        self
    }

    /// The most one principal may hold in the store (default
    /// [`DEFAULT_QUOTA`]); the store checks it atomically with each
    /// creation. `Quota::default()` is no limit.
    pub fn quota(mut self, quota: Quota) -> Self {
        self.quota = quota;
        self
    }

    /// The maintenance leader's term (default
    /// [`DEFAULT_LEADER_LEASE`](crate::DEFAULT_LEADER_LEASE)), renewed every
    /// third of it: when the leader dies, another runtime on the store takes
    /// the reaper and lapsed-lease triage over within `lease + lease / 3`.
    pub fn leader_lease(mut self, lease: Duration) -> Self {
        self.leader_lease = lease;
        self
    }

    /// How often the executor looks for due work when nothing woke it.
    pub fn claim_interval(mut self, every: Duration) -> Self {
        self.claim_interval = every;
        self
    }

    /// Seeds retry jitter (CPython-compatible MT19937) for reproducible runs.
    pub fn jitter_seed(mut self, seed: u64) -> Self {
        self.random = Some(Box::new(PyRandom::new(seed)));
        self
    }

    /// Uses `source` for retry jitter.
    pub fn random_source(mut self, source: Box<dyn RandomSource>) -> Self {
        self.random = Some(source);
        self
    }

    /// Checks the configuration (the policy, and every tool's input schema,
    /// which is compiled here once) and builds the runtime (nothing runs until
    /// [`Runtime::start`]). Its instant of building is the orphan sweep's
    /// silence floor.
    pub fn build(self) -> Result<Runtime, RuntimeError> {
        self.policy.validate().map_err(RuntimeError::InvalidPolicy)?;
        if self.concurrency == 0 {
            return Err(RuntimeError::InvalidPolicy("concurrency must be at least 1".into()));
        }
        if self.leader_lease < Duration::from_millis(3) {
            return Err(RuntimeError::InvalidPolicy("leader_lease must be at least 3 ms".into()));
        }
        if self.claim_interval.is_zero() {
            return Err(RuntimeError::InvalidPolicy("claim_interval must be positive".into()));
        }
        let mut tools = BTreeMap::new();
        let mut declared = HashMap::new();
        for tool in self.tools {
            let spec = tool.spec();
            if spec.name.is_empty() {
                return Err(RuntimeError::InvalidPolicy("a tool has an empty name".into()));
            }
            if let Some(d) = spec.expected_duration {
                declared.insert(spec.name.clone(), d);
            }
            let name = spec.name.clone();
            let arguments = CompiledSchema::compile(&spec.input_schema)
                .map_err(|reason| RuntimeError::InvalidToolSchema { tool: name.clone(), reason })?;
            if tools.insert(name.clone(), RegisteredTool { tool, spec, arguments }).is_some() {
                return Err(RuntimeError::DuplicateTool(name));
            }
        }
        let started_at = self.clock.now();
        let leader = crate::leader::Leader::new(self.store.leadership(), self.leader_lease);
        let shared = Shared {
            classifier: Classifier::new(&self.policy.classifier),
            hints: Hints::new(self.policy.poll_hint.clone(), declared),
            store: self.store,
            policy: self.policy,
            clock: self.clock,
            tools,
            concurrency: self.concurrency,
            slots: Arc::new(tokio::sync::Semaphore::new(self.concurrency)),
            max_waiting: self.max_waiting,
            claims: Default::default(),
            single_node: self.single_node,
            claim_interval: self.claim_interval,
            quota: self.quota,
            rng: Mutex::new(self.random.unwrap_or_else(|| Box::new(PyRandom::from_entropy()))),
            owner: format!("executor-{}", uuid::Uuid::new_v4()),
            started_at,
            polls: Default::default(),
            running: Default::default(),
            wakeups: Default::default(),
            leader,
            stopping: AtomicBool::new(false),
            started: AtomicBool::new(false),
            background_stop: CancellationToken::new(),
            background: Mutex::new(Vec::new()),
            claim_lock: tokio::sync::Mutex::new(()),
        };
        Ok(Runtime { shared: Arc::new(shared) })
    }
}
