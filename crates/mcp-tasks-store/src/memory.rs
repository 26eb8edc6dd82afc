//! [`MemoryStore`]: the reference [`TaskStore`], kept in process memory.
//!
//! It is the executable specification the conformance suite is checked
//! against first, and the "non-durable" row of the paper's Table 1: a process
//! restart loses every task. One mutex guards all maps, so every operation is
//! trivially atomic; it is never held across an `.await` (no method awaits).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use mcp_tasks_core::status::ALL_STATUSES;
use mcp_tasks_core::{Lease, TaskId, TaskRecord, TaskStatus, Timestamp, call_fingerprint};

use crate::error::StoreError;
use crate::params::*;
use crate::store::TaskStore;

/// A [`TaskStore`] in process memory: correct, concurrent, not durable.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for MemoryStore {
    // Counts, not contents: a store's Debug ends up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("MemoryStore").field("tasks", &inner.tasks.len()).field("dead_letters", &inner.dead.len()).finish()
    }
}

#[derive(Debug, Default)]
struct Inner {
    tasks: HashMap<TaskId, TaskRecord>,
    /// (principal or "", idempotency key) → the task holding the key.
    keys: HashMap<(String, String), TaskId>,
    /// Dead letters with the sequence number they were written at, so
    /// "newest first" is stable when two share a `dead_at`.
    dead: HashMap<TaskId, (u64, DeadLetter)>,
    dead_seq: u64,
    /// Each task's ended attempts, oldest first.
    attempts: HashMap<TaskId, Vec<AttemptRecord>>,
    /// Principal (or "" for the anonymous one) → (tasks, argument bytes) it
    /// holds, kept with every insert and delete so a quota check is O(1).
    usage: HashMap<String, (u64, u64)>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // No method panics while holding the lock, so a poisoned lock can
        // only come from a panic outside our code; the maps are still whole.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The idempotency-key slot of a task: keys are unique per principal, and the
/// anonymous principal shares the slot of the empty one (as in SQL stores,
/// which index `COALESCE(principal, '')`).
fn key_slot(principal: Option<&str>, key: &str) -> (String, String) {
    (principal.unwrap_or_default().to_owned(), key.to_owned())
}

impl Inner {
    fn create(&mut self, new: NewTask) -> Result<Created, StoreError> {
        let fingerprint = call_fingerprint(&new.tool, &new.arguments);
        if let Some(key) = &new.idempotency_key
            && let Some(existing) = self.keys.get(&key_slot(new.principal.as_deref(), key))
        {
            if let Some(record) = self.tasks.get(existing).filter(|r| r.fingerprint == fingerprint) {
                return Ok(Created { record: record.clone(), created: false });
            }
            return Err(StoreError::IdempotencyConflict { key: key.clone(), existing: existing.clone() });
        }
        if self.tasks.contains_key(&new.id) {
            return Err(StoreError::DuplicateId(new.id));
        }
        let bytes = argument_bytes(&new.arguments);
        let slot = new.principal.clone().unwrap_or_default();
        if let Some(quota) = &new.quota {
            let (tasks, held) = self.usage.get(&slot).copied().unwrap_or_default();
            quota.admit(new.principal.as_deref(), tasks, held, bytes)?;
        }
        let usage = self.usage.entry(slot).or_default();
        usage.0 += 1;
        usage.1 += bytes;
        let record = new.into_record(fingerprint);
        if let Some(key) = &record.idempotency_key {
            self.keys.insert(key_slot(record.principal.as_deref(), key), record.id.clone());
        }
        self.tasks.insert(record.id.clone(), record.clone());
        Ok(Created { record, created: true })
    }

    fn apply_one(&mut self, update: GuardedUpdate) -> UpdateOutcome {
        let Some(record) = self.tasks.get_mut(&update.guard.id) else {
            return UpdateOutcome::NotFound;
        };
        if !guard_holds(&update.guard, record) {
            return UpdateOutcome::Lost;
        }
        match update.update {
            Update::Delete => {
                if record.status.is_live() {
                    return UpdateOutcome::Lost;
                }
                if let Some(removed) = self.tasks.remove(&update.guard.id) {
                    self.attempts.remove(&removed.id);
                    if let Some(key) = &removed.idempotency_key {
                        self.keys.remove(&key_slot(removed.principal.as_deref(), key));
                    }
                    let slot = removed.principal.clone().unwrap_or_default();
                    if let Some(usage) = self.usage.get_mut(&slot) {
                        usage.0 = usage.0.saturating_sub(1);
                        usage.1 = usage.1.saturating_sub(argument_bytes(&removed.arguments));
                    }
                }
                UpdateOutcome::Applied(None)
            }
            Update::Change(change) => {
                if record.status.is_terminal() {
                    return UpdateOutcome::Lost;
                }
                if let Some(to) = change.status
                    && record.status.check_transition(to).is_err()
                {
                    return UpdateOutcome::Lost;
                }
                let dead_letter = change.dead_letter.clone();
                let attempt_end = change.attempt_end.clone();
                let now = change.now;
                apply_change(record, *change);
                let record = record.clone();
                if let Some(letter) = dead_letter {
                    self.insert_dead_letter(&record, letter);
                }
                if let Some(end) = attempt_end {
                    self.attempts.entry(record.id.clone()).or_default().push(AttemptRecord::from_end(
                        record.id.clone(),
                        now,
                        end,
                    ));
                }
                UpdateOutcome::Applied(Some(record))
            }
        }
    }

    fn insert_dead_letter(&mut self, record: &TaskRecord, letter: NewDeadLetter) {
        self.dead_seq += 1;
        let dead = DeadLetter {
            task_id: record.id.clone(),
            tool: record.tool.clone(),
            arguments: record.arguments.clone(),
            principal: record.principal.clone(),
            attempts: record.attempt,
            reason: letter.reason,
            error: letter.error,
            dead_at: letter.dead_at,
            requeued_as: None,
        };
        self.dead.insert(record.id.clone(), (self.dead_seq, dead));
    }
}

/// Whether every set field of `guard` holds for `record`.
fn guard_holds(guard: &Guard, record: &TaskRecord) -> bool {
    guard.version.is_none_or(|v| record.version == v)
        && guard.status.is_none_or(|s| record.status == s)
        && guard.attempt.is_none_or(|a| record.attempt == a)
        && guard.lease_owner.as_deref().is_none_or(|owner| record.lease.as_ref().is_some_and(|l| l.owner == owner))
        && guard.cancel_requested.is_none_or(|c| record.cancel_requested == c)
        && guard.last_seen_at_or_before.is_none_or(|t| record.last_seen_at() <= t)
}

/// Writes every set field of `change` into `record`, bumps the version and,
/// for a visible change, stamps `updated_at`. (The dead letter is the
/// caller's business.)
fn apply_change(record: &mut TaskRecord, change: Change) {
    let visible = change.is_visible();
    let Change {
        now,
        status,
        status_message,
        attempt,
        max_attempts,
        run_at,
        lease,
        cancel_requested,
        terminal_at,
        expires_at,
        result,
        error,
        input_requests,
        input_responses,
        dead_letter: _,
        attempt_end: _,
    } = change;
    if let Some(v) = status {
        record.status = v;
    }
    if let Some(v) = status_message {
        record.status_message = v;
    }
    if let Some(v) = attempt {
        record.attempt = v;
    }
    if let Some(v) = max_attempts {
        record.max_attempts = v;
    }
    if let Some(v) = run_at {
        record.run_at = v;
    }
    if let Some(v) = lease {
        record.lease = v;
    }
    if let Some(v) = cancel_requested {
        record.cancel_requested = v;
    }
    if let Some(v) = terminal_at {
        record.terminal_at = Some(v);
    }
    if let Some(v) = expires_at {
        record.expires_at = v;
    }
    if let Some(v) = result {
        record.result = Some(v);
    }
    if let Some(v) = error {
        record.error = Some(v);
    }
    if let Some(v) = input_requests {
        record.input_requests = v;
    }
    if let Some(v) = input_responses {
        record.input_responses = v;
    }
    record.version += 1;
    if visible {
        record.updated_at = now;
    }
}

/// Whether `record` is due for a claim at `now` by an executor that runs `tools`.
fn is_due(record: &TaskRecord, now: Timestamp, tools: Option<&[String]>) -> bool {
    record.status == TaskStatus::Working
        && record.lease.is_none()
        && !record.cancel_requested
        && record.run_at.is_some_and(|r| r <= now)
        && tools.is_none_or(|t| t.contains(&record.tool))
}

/// Takes the first `limit` of `rows` by `key` (then id), cloned.
fn oldest_first(rows: impl Iterator<Item = (Timestamp, TaskRecord)>, limit: usize) -> Vec<TaskRecord> {
    let mut rows: Vec<_> = rows.collect();
    rows.sort_by(|(a, ra), (b, rb)| a.cmp(b).then_with(|| ra.id.cmp(&rb.id)));
    rows.into_iter().take(limit).map(|(_, r)| r).collect()
}

/// `limit`, where 0 means "no limit" (listings built with `Default`).
fn listing_limit(limit: usize) -> usize {
    if limit == 0 { usize::MAX } else { limit }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn create(&self, new: NewTask) -> Result<Created, StoreError> {
        self.lock().create(new)
    }

    async fn get(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.lock().tasks.get(id).cloned())
    }

    async fn get_visible(&self, id: &TaskId, principal: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        // Filter before cloning: another principal's task is never copied.
        Ok(self.lock().tasks.get(id).filter(|r| r.principal.as_deref() == principal).cloned())
    }

    async fn record_polls(&self, polls: &[(TaskId, Timestamp)]) -> Result<(), StoreError> {
        let mut inner = self.lock();
        for (id, at) in polls {
            if let Some(record) = inner.tasks.get_mut(id) {
                record.last_polled_at = Some(record.last_polled_at.map_or(*at, |old| old.max(*at)));
            }
        }
        Ok(())
    }

    async fn claim(&self, params: ClaimParams) -> Result<Vec<TaskRecord>, StoreError> {
        let mut inner = self.lock();
        let tools = params.tools.as_deref();
        let due = oldest_first(
            inner.tasks.values().filter(|r| is_due(r, params.now, tools)).map(|r| (r.run_at.unwrap_or_default(), r.clone())),
            params.limit,
        );
        let lease = Lease { owner: params.owner.clone(), expires_at: params.lease_expires_at };
        let mut claimed = Vec::with_capacity(due.len());
        for row in due {
            if let Some(record) = inner.tasks.get_mut(&row.id) {
                record.lease = Some(lease.clone());
                record.version += 1;
                claimed.push(record.clone());
            }
        }
        Ok(claimed)
    }

    async fn apply(&self, updates: Vec<GuardedUpdate>) -> Result<Vec<UpdateOutcome>, StoreError> {
        let mut inner = self.lock();
        Ok(updates.into_iter().map(|u| inner.apply_one(u)).collect())
    }

    async fn attempts(&self, id: &TaskId) -> Result<Vec<AttemptRecord>, StoreError> {
        Ok(self.lock().attempts.get(id).cloned().unwrap_or_default())
    }

    async fn sweep_candidates(&self, query: SweepQuery) -> Result<Vec<TaskRecord>, StoreError> {
        let inner = self.lock();
        let rows = inner.tasks.values();
        let live = |r: &&TaskRecord| r.status.is_live();
        Ok(match query {
            SweepQuery::PastDeadline { now, limit } => {
                oldest_first(rows.filter(live).filter(|r| r.deadline_at <= now).map(|r| (r.deadline_at, r.clone())), limit)
            }
            SweepQuery::Unseen { cutoff, limit } => oldest_first(
                rows.filter(live).filter(|r| r.last_seen_at() <= cutoff).map(|r| (r.last_seen_at(), r.clone())),
                limit,
            ),
            SweepQuery::Expired { now, limit } => oldest_first(
                rows.filter(|r| r.status.is_terminal())
                    .filter_map(|r| r.expires_at.filter(|e| *e <= now).map(|e| (e, r.clone()))),
                limit,
            ),
            SweepQuery::Leased { before, limit } => oldest_first(
                rows.filter(live).filter_map(|r| {
                    let lease = r.lease.as_ref()?;
                    before.is_none_or(|b| lease.expires_at <= b).then(|| (lease.expires_at, r.clone()))
                }),
                limit,
            ),
        })
    }

    async fn list(&self, query: ListQuery) -> Result<Vec<TaskRecord>, StoreError> {
        let inner = self.lock();
        let mut rows: Vec<_> = inner
            .tasks
            .values()
            .filter(|r| query.statuses.is_empty() || query.statuses.contains(&r.status))
            .filter(|r| query.tool.as_deref().is_none_or(|t| r.tool == t))
            .filter(|r| query.principal.is_none() || r.principal == query.principal)
            .filter(|r| query.created_before.is_none_or(|t| r.created_at < t))
            .filter(|r| query.created_since.is_none_or(|t| r.created_at >= t))
            .filter(|r| query.id_prefix.as_deref().is_none_or(|p| r.id.as_str().starts_with(p)))
            .cloned()
            .collect();
        rows.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
        rows.truncate(listing_limit(query.limit));
        Ok(rows)
    }

    async fn count_by_status(&self) -> Result<BTreeMap<TaskStatus, u64>, StoreError> {
        let inner = self.lock();
        let mut counts: BTreeMap<TaskStatus, u64> = ALL_STATUSES.into_iter().map(|s| (s, 0)).collect();
        for record in inner.tasks.values() {
            *counts.entry(record.status).or_default() += 1;
        }
        Ok(counts)
    }

    async fn count_by_status_and_tool(&self) -> Result<BTreeMap<(TaskStatus, String), u64>, StoreError> {
        let inner = self.lock();
        let mut counts = BTreeMap::new();
        for record in inner.tasks.values() {
            *counts.entry((record.status, record.tool.clone())).or_default() += 1;
        }
        Ok(counts)
    }

    async fn recent_durations(&self, tool: &str, limit: usize) -> Result<Vec<i64>, StoreError> {
        let inner = self.lock();
        let mut done: Vec<_> = inner
            .tasks
            .values()
            .filter(|r| r.status == TaskStatus::Completed && r.tool == tool)
            .filter_map(|r| r.terminal_at.map(|t| (t, r.id.clone(), t.as_millis() - r.created_at.as_millis())))
            .collect();
        done.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        Ok(done.into_iter().take(limit).map(|(_, _, ms)| ms).collect())
    }

    async fn list_dead_letters(&self, query: DeadLetterQuery) -> Result<Vec<DeadLetter>, StoreError> {
        let inner = self.lock();
        let mut rows: Vec<_> = inner
            .dead
            .values()
            .filter(|(_, d)| query.tool.as_deref().is_none_or(|t| d.tool == t))
            .filter(|(_, d)| query.include_requeued || d.requeued_as.is_none())
            .filter(|(_, d)| query.dead_before.is_none_or(|t| d.dead_at < t))
            .filter(|(_, d)| query.dead_since.is_none_or(|t| d.dead_at >= t))
            .filter(|(_, d)| query.id_prefix.as_deref().is_none_or(|p| d.task_id.as_str().starts_with(p)))
            .collect();
        rows.sort_by(|(sa, a), (sb, b)| b.dead_at.cmp(&a.dead_at).then_with(|| sb.cmp(sa)));
        Ok(rows.into_iter().take(listing_limit(query.limit)).map(|(_, d)| d.clone()).collect())
    }

    async fn get_dead_letter(&self, task: &TaskId) -> Result<Option<DeadLetter>, StoreError> {
        Ok(self.lock().dead.get(task).map(|(_, d)| d.clone()))
    }

    async fn requeue_dead_letter(&self, task: &TaskId, new: NewTask) -> Result<TaskRecord, StoreError> {
        let mut inner = self.lock();
        match inner.dead.get(task) {
            None => return Err(StoreError::DeadLetterNotFound(task.clone())),
            Some((_, d)) => {
                if let Some(requeued_as) = &d.requeued_as {
                    return Err(StoreError::AlreadyRequeued { task: task.clone(), requeued_as: requeued_as.clone() });
                }
            }
        }
        let record = inner.create(new)?.record;
        if let Some((_, d)) = inner.dead.get_mut(task) {
            d.requeued_as = Some(record.id.clone());
        }
        Ok(record)
    }

    async fn purge_dead_letters(&self, query: PurgeQuery) -> Result<u64, StoreError> {
        let mut inner = self.lock();
        let before = inner.dead.len();
        inner.dead.retain(|id, (_, d)| {
            let matches = query.task_ids.as_ref().is_none_or(|ids| ids.contains(id))
                && query.dead_before.is_none_or(|t| d.dead_at < t)
                && query.tool.as_deref().is_none_or(|t| d.tool == t);
            !matches
        });
        Ok((before - inner.dead.len()) as u64)
    }
}
