//! `EXPLAIN QUERY PLAN` checks: every sweep, claim and key lookup walks its
//! own index, so its cost follows the rows it returns, not the table size.

use mcp_tasks_core::Timestamp;
use mcp_tasks_store::{ListQuery, SweepQuery};
use rusqlite::Connection;

use crate::open::open_writer;
use crate::reads::{ATTEMPTS_SQL, COUNT_BY_STATUS_AND_TOOL_SQL, RECENT_DURATIONS_SQL, list_sql, sweep_sql};
use crate::writes::{USAGE_SQL, claim_sql, idempotency_sql};

/// The plan's detail lines, one per step.
fn plan(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).expect("explain");
    // Plans do not depend on the bound values; bind NULL to each parameter.
    let nulls = vec![rusqlite::types::Value::Null; stmt.parameter_count()];
    let rows = stmt.query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3)).expect("plan rows");
    rows.collect::<Result<_, _>>().expect("plan")
}

/// Asserts `sql` is served by `index`, never scans the table, and needs no
/// sort of its own.
fn assert_uses(conn: &Connection, sql: &str, index: &str) {
    let steps = plan(conn, sql);
    let text = steps.join(" | ");
    assert!(steps.iter().any(|s| s.contains(&format!("INDEX {index}"))), "{sql}\nshould use {index}, plan: {text}");
    assert!(
        !steps.iter().any(|s| s.starts_with("SCAN tasks") && !s.contains("INDEX")),
        "{sql}\nmust not scan the tasks table, plan: {text}"
    );
    assert!(!text.contains("TEMP B-TREE"), "{sql}\nmust not sort, plan: {text}");
}

#[test]
fn every_sweep_and_claim_uses_its_partial_index() {
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = open_writer(&dir.path().join("plans.db"), crate::DEFAULT_BUSY_TIMEOUT).expect("open");
    let t = Timestamp(0);
    // Each sweep has its own partial index, named here rather than taken
    // from `sweep_sql`, so the SQL and its index cannot drift together.
    for (query, expected) in [
        (SweepQuery::PastDeadline { now: t, limit: 10 }, "tasks_deadline"),
        (SweepQuery::Unseen { cutoff: t, limit: 10 }, "tasks_last_seen"),
        (SweepQuery::Expired { now: t, limit: 10 }, "tasks_expiry"),
        (SweepQuery::Leased { before: Some(t), limit: 10 }, "tasks_lease"),
        (SweepQuery::Leased { before: None, limit: 10 }, "tasks_lease"),
    ] {
        let (sql, index) = sweep_sql(&query);
        assert_eq!(index, expected, "{query:?}");
        assert_uses(&conn, &sql, expected);
    }
    assert_uses(&conn, &claim_sql(false), "tasks_claim");
    assert_uses(&conn, &claim_sql(true), "tasks_claim");
    assert_uses(&conn, &idempotency_sql(), "tasks_idempotency");
    assert_uses(&conn, RECENT_DURATIONS_SQL, "tasks_durations");
    // The gauge of tasks by status and tool reads its covering index alone.
    // The gauge of tasks by status and tool reads the counts, never a task row.
    let counted = plan(&conn, COUNT_BY_STATUS_AND_TOOL_SQL).join(" | ");
    assert!(counted.contains("task_counts") && !counted.contains("tasks "), "{counted}");
    // A quota check is a primary-key lookup of the principal's usage row.
    assert_uses(&conn, USAGE_SQL, "sqlite_autoindex_principal_usage_1");
    // A task's history walks its index, in write order.
    assert_uses(&conn, ATTEMPTS_SQL, "task_attempts_task");
    // One principal's tasks, newest first, straight off its index.
    assert_uses(&conn, &list_sql(&ListQuery { principal: Some("p".into()), ..ListQuery::default() }), "tasks_principal");
    assert_uses(&conn, &list_sql(&ListQuery::default()), "tasks_created");
}

#[test]
fn an_id_prefix_is_a_primary_key_range() {
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = open_writer(&dir.path().join("plans.db"), crate::DEFAULT_BUSY_TIMEOUT).expect("open");
    let sql = list_sql(&ListQuery { id_prefix: Some("0190".into()), ..ListQuery::default() });
    let steps = plan(&conn, &sql);
    // The few ids in the range are sorted by creation; no row outside it is read.
    assert!(steps.iter().any(|s| s.contains("sqlite_autoindex_tasks_1") && s.contains("id>? AND id<?")), "{steps:?}");
}

#[test]
fn a_query_outside_the_partial_index_is_caught() {
    // The check itself must be able to fail: a filter that does not repeat
    // the index's WHERE cannot use the partial index.
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = open_writer(&dir.path().join("plans.db"), crate::DEFAULT_BUSY_TIMEOUT).expect("open");
    let steps = plan(&conn, "SELECT id FROM tasks WHERE deadline_at <= 5 ORDER BY deadline_at, id LIMIT 3");
    assert!(!steps.iter().any(|s| s.contains("INDEX tasks_deadline")), "plan: {steps:?}");
}
