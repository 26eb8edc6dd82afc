//! The query planner stability guarantee: every connection the store opens
//! has it on, so a cached statement is not re-prepared each time new values
//! are bound (the claim's `run_at <= ?` and `LIMIT ?` made SQLite, built
//! with `SQLITE_ENABLE_STAT4`, re-plan every claim).

use mcp_tasks_core::Timestamp;
use mcp_tasks_store::ClaimParams;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, StatementStatus};

use crate::open::{open_reader, open_writer};
use crate::write_tx::WriteTx;
use crate::writes::{claim, claim_sql};

/// Claims with a different instant and limit each time, as the executor
/// does, and returns how often SQLite re-prepared the cached claim statement.
fn reprepares_over_claims(conn: Connection) -> i32 {
    let conn = WriteTx::new(conn);
    for n in 1..=5_i64 {
        let params = ClaimParams {
            owner: format!("executor/{n}"),
            now: Timestamp(1_000 * n),
            lease_expires_at: Timestamp(1_000 * n + 30_000),
            limit: n as usize,
            tools: Some(vec!["echo".to_owned(), format!("tool-{n}")]),
        };
        claim(&conn, params).expect("claim");
    }
    conn.prepare_cached(&claim_sql(true)).expect("the cached claim statement").get_status(StatementStatus::RePrepare)
}

#[test]
fn writer_and_reader_connections_have_the_guarantee_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("qpsg.db");
    let writer = open_writer(&path, crate::DEFAULT_BUSY_TIMEOUT).expect("open writer");
    let reader = open_reader(&path, crate::DEFAULT_BUSY_TIMEOUT).expect("open reader");
    assert!(writer.db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG).expect("read config"));
    assert!(reader.db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG).expect("read config"));
}

#[test]
fn the_claim_statement_is_prepared_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = open_writer(&dir.path().join("claims.db"), crate::DEFAULT_BUSY_TIMEOUT).expect("open");
    assert_eq!(reprepares_over_claims(conn), 0, "the claim statement was re-prepared on new bindings");
}

#[test]
fn without_the_guarantee_every_new_binding_re_prepares_the_claim() {
    // The counter the test above reads does count: with the guarantee off,
    // SQLite re-plans the claim for its new values.
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = open_writer(&dir.path().join("claims.db"), crate::DEFAULT_BUSY_TIMEOUT).expect("open");
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, false).expect("turn it off");
    assert!(reprepares_over_claims(conn) > 0, "expected re-prepares without the guarantee");
}
