//! Creating tasks: many in one multi-row insert, each with the idempotency
//! semantics of the other stores.
//!
//! `INSERT … ON CONFLICT DO NOTHING` covers both unique constraints (the id
//! and the principal's idempotency key). When another transaction holds a
//! conflicting row it has not committed, PostgreSQL waits for it: a row we
//! skipped is therefore committed (or ours), and the next statement of this
//! read-committed transaction sees it. Who holds the key then decides the
//! answer: the same call gets the existing task (`created: false`), another
//! call [`StoreError::IdempotencyConflict`], and a taken id
//! [`StoreError::DuplicateId`].
//!
//! Quotas ([`NewTask::quota`]) are checked in the same transaction against
//! `principal_usage`, whose rows the usage triggers keep and this module
//! locks (see [`create_all`]): creations of one principal, from any
//! instance, are serialised on that row, so none can overshoot.

use std::collections::{HashMap, HashSet};

use deadpool_postgres::{GenericClient, Transaction};
use mcp_tasks_core::{TaskId, TaskRecord, call_fingerprint};
use mcp_tasks_store::{Created, NewTask, StoreError};

use crate::failure::Failure;
use crate::row::{TASK_COLUMNS, task_from_row, to_json};

/// Most creations one group commit carries, so one commit's latency stays
/// bounded.
pub(crate) const MAX_BATCH: usize = 512;

/// Rounds of insert-then-resolve before giving up: a second round is needed
/// only when a conflicting row vanished (its task expired) in between.
const MAX_ROUNDS: usize = 4;

/// The multi-row insert: one array parameter per column.
fn insert_sql() -> String {
    format!(
        "INSERT INTO tasks (id, version, tool, arguments, principal, status, status_message, attempt, \
           max_attempts, created_at, updated_at, deadline_at, run_at, cancel_requested, input_requests, \
           input_responses, idempotency_key, fingerprint, traceparent, lease_owner, lease_expires_at) \
         SELECT id, 1, tool, arguments, principal, 'working', status_message, 1, max_attempts, created_at, \
           created_at, deadline_at, run_at, false, '{{}}', '{{}}', idempotency_key, fingerprint, traceparent, \
           lease_owner, lease_expires_at \
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], \
                     $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], \
                     $13::text[], $14::bigint[]) \
           AS n(id, tool, arguments, principal, status_message, max_attempts, created_at, deadline_at, \
                run_at, idempotency_key, fingerprint, traceparent, lease_owner, lease_expires_at) \
         ON CONFLICT DO NOTHING \
         RETURNING {TASK_COLUMNS}"
    )
}

/// The tasks holding any of the given idempotency keys, spelled as the
/// `tasks_idempotency` index (`$1` principals or `''`, `$2` keys; the
/// caller matches pairs).
pub(crate) fn key_holders_sql() -> String {
    format!(
        "SELECT {TASK_COLUMNS} FROM tasks \
         WHERE coalesce(principal, '') = ANY($1::text[]) AND idempotency_key = ANY($2::text[]) \
           AND idempotency_key IS NOT NULL"
    )
}

/// Which of the ids `$1` are taken.
pub(crate) const TAKEN_IDS_SQL: &str = "SELECT id FROM tasks WHERE id = ANY($1::text[])";

/// A job's key slot: keys are unique per principal, the anonymous one
/// sharing the slot of `""`.
fn slot(new: &NewTask) -> Option<(String, String)> {
    new.idempotency_key.as_ref().map(|k| (new.principal.clone().unwrap_or_default(), k.clone()))
}

/// Locks the usage rows of `principals` (`''` for the anonymous one),
/// creating missing ones, in byte order, and returns what each holds. The
/// lock is held to the commit: another transaction creating (or deleting) a
/// task of one of them waits, so the quota check stays true until our
/// inserts are committed.
pub(crate) const LOCK_USAGE_SQL: &str = "INSERT INTO principal_usage AS u (principal, tasks, argument_bytes) \
     SELECT p, 0, 0 FROM unnest($1::text[]) AS n(p) ORDER BY p COLLATE \"C\" \
     ON CONFLICT (principal) DO UPDATE SET tasks = u.tasks \
     RETURNING principal, tasks, argument_bytes";

/// What each principal holds: (tasks, argument bytes).
type Usage = HashMap<String, (u64, u64)>;

/// How one round decided a pending job.
enum Decision {
    /// To be inserted now.
    Insert,
    /// Its id or key slot is taken by an earlier job of this round: answered
    /// from the row that one leaves.
    Defer,
    /// It would pass its quota (unless it turns out to be a replay).
    Refuse(StoreError),
}

/// Creates every task of `news` inside `tx`, as if one after the other in
/// order; one result each. Fails as a whole only when the database does.
///
/// Quotas: when any job carries one, the usage rows of every principal in
/// the batch are locked first (in byte order, as the usage triggers touch
/// them), then the jobs are admitted in order against what each principal
/// holds plus what earlier jobs of the batch add. A refused job is still
/// looked up as a replay (a replay is never refused), and a refusal is
/// final only in a round where every admitted job was inserted: a skipped
/// one (its id or key turned out taken) added nothing, so the round's
/// refusals are decided again.
pub(crate) async fn create_all(tx: &Transaction<'_>, news: &[NewTask]) -> Result<Vec<Result<Created, StoreError>>, Failure> {
    let fingerprints: Vec<String> = news.iter().map(|n| call_fingerprint(&n.tool, &n.arguments)).collect();
    let texts: Vec<String> = news.iter().map(|n| to_json(&n.arguments)).collect();
    let mut results: Vec<Option<Result<Created, StoreError>>> = vec![None; news.len()];
    for _ in 0..MAX_ROUNDS {
        let pending: Vec<usize> = (0..news.len()).filter(|&i| results[i].is_none()).collect();
        if pending.is_empty() {
            break;
        }
        let mut usage = lock_usage(tx, news, &pending).await?;
        // Insert the first job of each id and key slot; a later one is
        // answered from the row its predecessor left, as it would be had it
        // come after it. A refused job takes no slot and adds no usage.
        let mut ids = HashSet::new();
        let mut slots = HashSet::new();
        let mut decisions = Vec::with_capacity(pending.len());
        for &i in &pending {
            let new = &news[i];
            let taken = ids.contains(&new.id) || slot(new).is_some_and(|s| slots.contains(&s));
            let decision = if taken {
                Decision::Defer
            } else {
                let held = usage.entry(new.principal.clone().unwrap_or_default()).or_default();
                let bytes = texts[i].len() as u64;
                match new.quota.map_or(Ok(()), |q| q.admit(new.principal.as_deref(), held.0, held.1, bytes)) {
                    Ok(()) => {
                        held.0 += 1;
                        held.1 += bytes;
                        ids.insert(new.id.clone());
                        if let Some(s) = slot(new) {
                            slots.insert(s);
                        }
                        Decision::Insert
                    }
                    Err(refusal) => Decision::Refuse(refusal),
                }
            };
            decisions.push((i, decision));
        }
        let insert: Vec<usize> = decisions.iter().filter(|(_, d)| matches!(d, Decision::Insert)).map(|&(i, _)| i).collect();
        let inserted = insert_rows(tx, news, &texts, &fingerprints, &insert).await?;
        let all_inserted = inserted.len() == insert.len();
        for record in inserted {
            if let Some(&i) = insert.iter().find(|&&i| news[i].id == record.id) {
                results[i] = Some(Ok(Created { record, created: true }));
            }
        }
        let unresolved: Vec<usize> = pending.into_iter().filter(|&i| results[i].is_none()).collect();
        let mut refusals: HashMap<usize, StoreError> = decisions
            .into_iter()
            .filter_map(|(i, d)| match d {
                Decision::Refuse(e) => Some((i, e)),
                _ => None,
            })
            .collect();
        for (i, answer) in resolve(tx, news, &fingerprints, &unresolved).await? {
            results[i] = answer.or_else(|| {
                // Not a replay, not a taken id: the refusal stands if the
                // round's usage was exactly as admitted.
                refusals.remove(&i).filter(|_| all_inserted).map(Err)
            });
        }
    }
    Ok(results
        .into_iter()
        .zip(news)
        .map(|(r, new)| {
            r.unwrap_or_else(|| {
                Err(StoreError::Unavailable(format!(
                    "creating task {} kept conflicting with rows that vanished; try again",
                    new.id
                )))
            })
        })
        .collect())
}

/// Locks and reads the usage of every principal among the jobs `which`,
/// when any of them has a quota (else nothing to check: the triggers alone
/// keep the counts).
async fn lock_usage(tx: &Transaction<'_>, news: &[NewTask], which: &[usize]) -> Result<Usage, Failure> {
    if which.iter().all(|&i| news[i].quota.is_none()) {
        return Ok(Usage::new());
    }
    let mut principals: Vec<&str> = which.iter().map(|&i| news[i].principal.as_deref().unwrap_or_default()).collect();
    principals.sort_unstable();
    principals.dedup();
    let stmt = tx.prepare_cached(LOCK_USAGE_SQL).await?;
    let mut usage = Usage::with_capacity(principals.len());
    for row in tx.query(&stmt, &[&principals]).await? {
        let principal: String = row.try_get(0)?;
        let tasks: i64 = row.try_get(1)?;
        let bytes: i64 = row.try_get(2)?;
        usage.insert(principal, (tasks.max(0) as u64, bytes.max(0) as u64));
    }
    Ok(usage)
}

/// Inserts the jobs `which`; returns the rows actually inserted.
async fn insert_rows(
    tx: &Transaction<'_>,
    news: &[NewTask],
    texts: &[String],
    fingerprints: &[String],
    which: &[usize],
) -> Result<Vec<TaskRecord>, Failure> {
    if which.is_empty() {
        return Ok(Vec::new());
    }
    let column =
        |f: &dyn Fn(&NewTask) -> Option<String>| -> Vec<Option<String>> { which.iter().map(|&i| f(&news[i])).collect() };
    let instants = |f: &dyn Fn(&NewTask) -> i64| -> Vec<i64> { which.iter().map(|&i| f(&news[i])).collect() };
    let ids = column(&|n| Some(n.id.0.clone()));
    let tools = column(&|n| Some(n.tool.clone()));
    let arguments: Vec<&str> = which.iter().map(|&i| texts[i].as_str()).collect();
    let principals = column(&|n| n.principal.clone());
    let messages = column(&|n| n.status_message.clone());
    let max_attempts = instants(&|n| i64::from(n.max_attempts));
    let created = instants(&|n| n.created_at.as_millis());
    let deadlines = instants(&|n| n.deadline_at.as_millis());
    let run_ats = instants(&|n| n.run_at.as_millis());
    let keys = column(&|n| n.idempotency_key.clone());
    let prints: Vec<&str> = which.iter().map(|&i| fingerprints[i].as_str()).collect();
    let traceparents = column(&|n| n.trace_parent.clone());
    let lease_owners = column(&|n| n.lease.as_ref().map(|l| l.owner.clone()));
    let lease_expiries: Vec<Option<i64>> =
        which.iter().map(|&i| news[i].lease.as_ref().map(|l| l.expires_at.as_millis())).collect();
    let stmt = tx.prepare_cached(&insert_sql()).await?;
    let rows = tx
        .query(
            &stmt,
            &[
                &ids,
                &tools,
                &arguments,
                &principals,
                &messages,
                &max_attempts,
                &created,
                &deadlines,
                &run_ats,
                &keys,
                &prints,
                &traceparents,
                &lease_owners,
                &lease_expiries,
            ],
        )
        .await?;
    rows.iter().map(|r| task_from_row(r).map_err(Failure::Store)).collect()
}

/// Answers jobs whose insert was skipped (or deferred): by the holder of
/// their key, else by their taken id. A job neither explains stays
/// unanswered for the next round.
async fn resolve(
    tx: &Transaction<'_>,
    news: &[NewTask],
    fingerprints: &[String],
    which: &[usize],
) -> Result<Vec<(usize, Option<Result<Created, StoreError>>)>, Failure> {
    if which.is_empty() {
        return Ok(Vec::new());
    }
    let keyed: Vec<(String, String)> = which.iter().filter_map(|&i| slot(&news[i])).collect();
    let holders = if keyed.is_empty() {
        Vec::new()
    } else {
        let principals: Vec<&str> = keyed.iter().map(|(p, _)| p.as_str()).collect();
        let keys: Vec<&str> = keyed.iter().map(|(_, k)| k.as_str()).collect();
        let stmt = tx.prepare_cached(&key_holders_sql()).await?;
        tx.query(&stmt, &[&principals, &keys]).await?
    };
    let ids: Vec<&str> = which.iter().map(|&i| news[i].id.as_str()).collect();
    let stmt = tx.prepare_cached(TAKEN_IDS_SQL).await?;
    let taken: HashSet<String> = tx.query(&stmt, &[&ids]).await?.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>()?;
    let mut answers = Vec::with_capacity(which.len());
    for &i in which {
        let new = &news[i];
        let holder = slot(new).and_then(|(principal, key)| {
            holders.iter().find(|row| {
                let p: Option<&str> = row.try_get(4).ok().flatten();
                let k: Option<&str> = row.try_get(23).ok().flatten();
                p.unwrap_or_default() == principal && k == Some(key.as_str())
            })
        });
        let answer = if let Some(row) = holder {
            Some(task_from_row(row).and_then(|existing| {
                if existing.fingerprint == fingerprints[i] {
                    Ok(Created { record: existing, created: false })
                } else {
                    Err(StoreError::IdempotencyConflict {
                        key: new.idempotency_key.clone().unwrap_or_default(),
                        existing: existing.id,
                    })
                }
            }))
        } else if taken.contains(new.id.as_str()) {
            Some(Err(StoreError::DuplicateId(new.id.clone())))
        } else {
            None
        };
        answers.push((i, answer));
    }
    Ok(answers)
}

/// Creates one task inside `tx` (a requeue's fresh task).
pub(crate) async fn create_one(tx: &Transaction<'_>, new: NewTask) -> Result<Created, Failure> {
    let id: TaskId = new.id.clone();
    create_all(tx, std::slice::from_ref(&new))
        .await?
        .pop()
        .unwrap_or_else(|| Err(StoreError::Unavailable(format!("creating task {id} gave no answer"))))
        .map_err(Failure::Store)
}
