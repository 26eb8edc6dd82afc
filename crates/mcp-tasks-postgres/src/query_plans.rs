//! `EXPLAIN` checks: on a table large enough that PostgreSQL would rather
//! walk an index than read it all, every sweep, the claim, the key lookups
//! and the reads use an index, never a sequential scan of `tasks`, so their
//! cost follows the rows they touch, not the table size.

use mcp_tasks_core::{TaskId, Timestamp};
use mcp_tasks_store::{Change, Guard, GuardedUpdate, ListQuery, SweepQuery};
use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

use crate::apply::statement;
use crate::claim::claim_sql;
use crate::create::{TAKEN_IDS_SQL, key_holders_sql};
use crate::polls::RECORD_POLLS_SQL;
use crate::reads::{ATTEMPTS_SQL, RECENT_DURATIONS_SQL, get_sql, get_visible_sql, list_statement, sweep_sql};
use crate::testing::TestDatabase;

/// Terminal rows: the bulk of a long-running server's table.
const DONE: i64 = 50_000;
/// Live rows, a third of them leased.
const LIVE: i64 = 300;

/// Fills the schema: `DONE` completed tasks (expiring far in the future)
/// and `LIVE` working ones, then `ANALYZE`s so the planner knows.
async fn fill(client: &Client) {
    client
        .batch_execute(&format!(
            "INSERT INTO tasks (id, version, tool, arguments, principal, status, attempt, max_attempts, \
               created_at, updated_at, deadline_at, run_at, cancel_requested, terminal_at, expires_at, \
               input_requests, input_responses, idempotency_key, fingerprint) \
             SELECT 'done-' || lpad(g::text, 8, '0'), 2, CASE WHEN g % 2 = 0 THEN 'report' ELSE 'other' END, \
               '{{}}', 'user-' || (g % 50), 'completed', 1, 3, 1000000 + g, 1000500 + g, 2000000 + g, NULL, \
               false, 1000500 + g, 9000000000 + g, '{{}}', '{{}}', 'key-' || g, 'fp' \
             FROM generate_series(1, {DONE}) AS g; \
             INSERT INTO tasks (id, version, tool, arguments, principal, status, attempt, max_attempts, \
               created_at, updated_at, deadline_at, run_at, lease_owner, lease_expires_at, last_polled_at, \
               cancel_requested, input_requests, input_responses, fingerprint) \
             SELECT 'live-' || lpad(g::text, 8, '0'), 1, 'report', '{{}}', NULL, 'working', 1, 3, \
               8000000 + g, 8000000 + g, 8100000 + g, 8000000 + g, \
               CASE WHEN g % 3 = 0 THEN 'exec' END, CASE WHEN g % 3 = 0 THEN 8050000 + g END, \
               CASE WHEN g % 2 = 0 THEN 8010000 + g END, false, '{{}}', '{{}}', 'fp' \
             FROM generate_series(1, {LIVE}) AS g; \
             ANALYZE tasks;"
        ))
        .await
        .expect("fill the tasks table");
}

/// The plan of `sql` with `params` bound.
async fn plan(client: &Client, sql: &str, params: &[&(dyn ToSql + Sync)]) -> String {
    let rows = client.query(&format!("EXPLAIN {sql}"), params).await.unwrap_or_else(|e| panic!("EXPLAIN {sql}: {e}"));
    rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>().join("\n")
}

/// Asserts `sql` never scans `tasks` sequentially; returns its plan.
async fn assert_indexed(client: &Client, sql: &str, params: &[&(dyn ToSql + Sync)]) -> String {
    let plan = plan(client, sql, params).await;
    assert!(!plan.contains("Seq Scan on tasks"), "{sql}\nmust not scan the tasks table, plan:\n{plan}");
    assert!(plan.contains("Index"), "{sql}\nshould use an index, plan:\n{plan}");
    plan
}

/// Asserts `sql` is served by `index` and never scans `tasks` sequentially.
async fn assert_uses(client: &Client, sql: &str, params: &[&(dyn ToSql + Sync)], index: &str) {
    let plan = assert_indexed(client, sql, params).await;
    assert!(
        plan.contains(&format!(" {index} "))
            || plan.contains(&format!(" {index}\n"))
            || plan.ends_with(&format!(" {index}")),
        "{sql}\nshould use {index}, plan:\n{plan}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sweep_claim_and_read_uses_an_index() {
    let Some(db) = TestDatabase::create().await else { return };
    let store = crate::PostgresStore::open(&db.url()).await.expect("open");
    let client = db.connect().await;
    fill(&client).await;

    let limit = 100i64;
    // Each sweep has its own partial index, named here rather than taken
    // from `sweep_sql`, so the SQL and its index cannot drift together. The
    // instants make each match a few rows, as a healthy server's would.
    for (query, at, expected) in [
        (SweepQuery::PastDeadline { now: Timestamp(8100010), limit: 100 }, Some(8100010i64), "tasks_deadline"),
        (SweepQuery::Unseen { cutoff: Timestamp(8000010), limit: 100 }, Some(8000010), "tasks_last_seen"),
        (SweepQuery::Expired { now: Timestamp(9000000010), limit: 100 }, Some(9000000010), "tasks_expiry"),
        (SweepQuery::Leased { before: Some(Timestamp(8050010)), limit: 100 }, Some(8050010), "tasks_lease"),
        (SweepQuery::Leased { before: None, limit: 100 }, None, "tasks_lease"),
    ] {
        let (sql, index) = sweep_sql(&query);
        assert_eq!(index, expected, "{query:?}");
        match at {
            Some(at) => assert_uses(&client, &sql, &[&at, &limit], expected).await,
            None => assert_uses(&client, &sql, &[&limit], expected).await,
        }
    }

    let (owner, expires, now, claim_limit) = ("exec-2", 9_000_000i64, 8_000_010i64, 8i64);
    assert_uses(&client, &claim_sql(false), &[&owner, &expires, &now, &claim_limit], "tasks_claim").await;
    let tools = vec!["report"];
    assert_uses(&client, &claim_sql(true), &[&owner, &expires, &now, &claim_limit, &tools], "tasks_claim").await;

    let (principals, keys) = (vec!["user-7"], vec!["key-7"]);
    assert_uses(&client, &key_holders_sql(), &[&principals, &keys], "tasks_idempotency").await;
    let ids = vec!["done-00000007", "live-00000007"];
    assert_uses(&client, TAKEN_IDS_SQL, &[&ids], "tasks_pkey").await;
    let id = "done-00000007";
    assert_uses(&client, &get_sql(), &[&id], "tasks_pkey").await;
    let principal = Some("user-7");
    assert_uses(&client, &get_visible_sql(), &[&id, &principal], "tasks_pkey").await;
    let tool = "report";
    assert_uses(&client, RECENT_DURATIONS_SQL, &[&tool, &50i64], "tasks_durations").await;
    let (sql, params) = list_statement(&ListQuery { limit: 50, ..ListQuery::default() });
    assert_uses(&client, &sql, &params.refs(), "tasks_created").await;
    let (sql, params) = list_statement(&ListQuery { principal: Some("user-7".into()), limit: 50, ..ListQuery::default() });
    assert_uses(&client, &sql, &params.refs(), "tasks_principal").await;
    let (sql, params) = list_statement(&ListQuery { id_prefix: Some("done-0000000".into()), ..ListQuery::default() });
    assert_uses(&client, &sql, &params.refs(), "tasks_pkey").await;
    assert_uses(&client, ATTEMPTS_SQL, &[&id], "task_attempts_task").await;

    let ats = vec![8_000_500i64, 8_000_600];
    assert_uses(&client, RECORD_POLLS_SQL, &[&ids, &ats], "tasks_pkey").await;
    let guarded = GuardedUpdate::change(
        Guard { version: Some(1), lease_owner: Some("exec".into()), ..Guard::id(TaskId::from("live-00000003")) },
        Change { status_message: Some(Some("halfway".into())), ..Change::default() },
    );
    // A guarded update may walk the primary key or a partial index its
    // guard implies (the lease index for a lease owner): either is one row.
    let (sql, params) = statement(&guarded, true);
    assert_indexed(&client, &sql, &params.refs()).await;
    let (sql, params) = statement(&GuardedUpdate::delete(Guard::id(TaskId::from(id))), true);
    assert_indexed(&client, &sql, &params.refs()).await;
    drop(store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_outside_the_partial_index_is_caught() {
    // The check itself must be able to fail: a filter that does not repeat
    // the index's predicate cannot use the partial index, and the planner
    // reads the whole table.
    let Some(db) = TestDatabase::create().await else { return };
    let store = crate::PostgresStore::open(&db.url()).await.expect("open");
    let client = db.connect().await;
    fill(&client).await;
    let plan =
        plan(&client, "SELECT id FROM tasks WHERE deadline_at <= $1 ORDER BY deadline_at, id LIMIT 10", &[&8100010i64])
            .await;
    assert!(plan.contains("Seq Scan on tasks"), "plan:\n{plan}");
    drop(store);
}
