//! [`RuntimeBuilder`]: tools, policy, clock and executor settings, checked
//! once at `build`.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_core::{Classifier, Clock, LeaseTerms, Policy, PyRandom, RandomSource, SystemClock, Timestamp};
use mcp_tasks_store::{PollBuffer, Quota, TaskStore};
use tokio_util::sync::CancellationToken;

use crate::background::Background;
use crate::context::HandlerEnv;
use crate::error::RuntimeError;
use crate::executor::{Executor, ExecutorConfig};
use crate::hints::Hints;
use crate::leader::Leader;
use crate::lease::LeaseKeeper;
use crate::maintenance::Schedule;
use crate::measured_store::MeasuredStore;
use crate::metrics::Metrics;
use crate::poll_flusher::PollFlusher;
use crate::reaper::{Reaper, ReaperConfig};
use crate::registry::Tools;
use crate::running::Running;
use crate::runtime::{Inner, Runtime};
use crate::tool::TaskTool;
use crate::transitions::OutcomeRules;
use crate::triage::{Triage, TriageConfig};
use crate::wakeups::Wakeups;

/// Default number of handlers one runtime runs at once: 100, River's
/// default `MaxWorkers` per queue. A slot is an async task, not a thread, so
/// it costs little; what bounds throughput of short tasks is how many finish
/// per group commit, and with 16 slots a SQLite fsync paced the whole
/// executor. Lower it for tools that each hold a scarce resource.
pub const DEFAULT_CONCURRENCY: usize = 100;

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
pub const DEFAULT_QUOTA: Quota = Quota { max_tasks: Some(10_000), max_argument_bytes: Some(256 * 1024 * 1024) };

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
    metrics: Metrics,
    silence_floor: Option<Timestamp>,
    dispatch_at_creation: bool,
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

impl Runtime {
    /// Starts configuring a runtime on `store`.
    pub fn builder(store: Arc<dyn TaskStore>) -> RuntimeBuilder {
        RuntimeBuilder::new(store)
    }
}

impl RuntimeBuilder {
    fn new(store: Arc<dyn TaskStore>) -> Self {
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
            metrics: Metrics::global(),
            silence_floor: None,
            dispatch_at_creation: true,
        }
    }

    /// The instant the orphan sweep measures silence from at the earliest
    /// (default: when the runtime is built, since poll timestamps buffered
    /// before a crash may be lost). An operator's one-off sweep beside a
    /// server (`mcp-tasks reap`) judges stored poll timestamps alone by
    /// passing an earlier instant.
    pub fn silence_floor(mut self, floor: Timestamp) -> Self {
        self.silence_floor = Some(floor);
        self
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
    /// again when answered. Default [`DEFAULT_CONCURRENCY`]; each claim
    /// asks the store for every free slot at once.
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

    /// Whether a task created while this runtime's executor has a free
    /// slot and no known queued work is inserted already leased to it and
    /// started at once, skipping the claim (default `true`; effective once
    /// [`Runtime::start`] runs the claim loop). Off, every task waits for a
    /// claim, in `run_at` order with the tasks queued before it.
    pub fn dispatch_at_creation(mut self, yes: bool) -> Self {
        self.dispatch_at_creation = yes;
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

    /// Where the runtime's metrics go (default [`Metrics::global`]: the
    /// process's global `metrics` recorder, if any).
    pub fn metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
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
        let tools = Arc::new(Tools::register(self.tools)?);
        let policy = self.policy;
        let metrics = self.metrics;
        // Every store call the runtime makes is timed, whatever the backend.
        let store: Arc<dyn TaskStore> = Arc::new(MeasuredStore::new(self.store, metrics.clone()));
        let clock = self.clock;
        let running = Arc::new(Running::default());
        let wakeups = Arc::new(Wakeups::default());
        let polls = Arc::new(PollBuffer::default());
        let stopping = CancellationToken::new();
        let owner = format!("executor-{}", uuid::Uuid::new_v4());
        let leader = Arc::new(Leader::new(store.leadership(), clock.clone(), owner.clone(), self.leader_lease));
        // Only the maintenance leader sweeps (always this process on a store
        // no other process shares).
        let maintenance = Schedule { gate: leader.gate(), ..Schedule::every(policy.reaper_interval) };
        let env = Arc::new(HandlerEnv {
            store: store.clone(),
            clock: clock.clone(),
            wakeups: wakeups.clone(),
            slots: Arc::new(tokio::sync::Semaphore::new(self.concurrency)),
        });
        let executor = Arc::new(Executor {
            store: store.clone(),
            clock: clock.clone(),
            tools: tools.clone(),
            running: running.clone(),
            wakeups: wakeups.clone(),
            env,
            lease: LeaseKeeper::new(
                store.clone(),
                clock.clone(),
                LeaseTerms { duration: policy.lease_duration },
                metrics.clone(),
            ),
            outcomes: OutcomeRules {
                classifier: Classifier::new(&policy.classifier),
                retry: policy.retry.clone(),
                retention: policy.retention.clone(),
            },
            rng: Mutex::new(self.random.unwrap_or_else(|| Box::new(PyRandom::new(seed_from_os())))),
            config: ExecutorConfig {
                concurrency: self.concurrency,
                max_waiting: self.max_waiting,
                owner,
                schedule: Schedule {
                    trigger: Some(wakeups.executor.clone()),
                    eager: true,
                    ..Schedule::every(self.claim_interval)
                },
                dispatch_at_creation: self.dispatch_at_creation,
            },
            metrics: metrics.clone(),
            claims: AtomicU64::new(0),
            claim_lock: tokio::sync::Mutex::new(()),
            reserved: std::sync::Mutex::new(0),
            starting_dispatched: std::sync::Mutex::new(()),
            dispatching: std::sync::atomic::AtomicBool::new(false),
            last_claim_full: std::sync::atomic::AtomicBool::new(true),
            stopping: stopping.clone(),
        });
        let reaper = Arc::new(Reaper {
            store: store.clone(),
            clock: clock.clone(),
            polls: polls.clone(),
            running: running.clone(),
            metrics: metrics.clone(),
            config: ReaperConfig {
                retention: policy.retention.clone(),
                // This instant is the orphan sweep's silence floor.
                silence_floor: self.silence_floor.unwrap_or_else(|| clock.now()),
                schedule: maintenance.clone(),
            },
        });
        let triage = Arc::new(Triage {
            store: store.clone(),
            clock: clock.clone(),
            running: running.clone(),
            wakeups: wakeups.clone(),
            metrics: metrics.clone(),
            config: TriageConfig {
                rerunnable: tools.rerunnable(),
                retention: policy.retention.clone(),
                schedule: maintenance,
            },
        });
        let flusher = Arc::new(PollFlusher {
            store: store.clone(),
            polls: polls.clone(),
            schedule: Schedule::every(policy.poll_flush_interval),
        });
        let inner = Inner {
            hints: Hints::new(policy.poll_hint.clone(), tools.declared_durations()),
            store,
            clock,
            policy,
            quota: self.quota,
            single_node: self.single_node,
            tools,
            polls,
            running,
            wakeups,
            executor,
            reaper,
            triage,
            flusher,
            leader,
            metrics,
            background: Background::default(),
            started: AtomicBool::new(false),
            stopping,
        };
        Ok(Runtime { inner: Arc::new(inner) })
    }
}

/// A seed for production jitter from the OS's randomness (std's hasher
/// keys): drawn here, at the edge, so the core never reads entropy itself.
fn seed_from_os() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}
