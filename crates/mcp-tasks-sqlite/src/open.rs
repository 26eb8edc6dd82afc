//! Opening a database file: recognising it as ours, setting the durability
//! pragmas, and migrating it to the current schema.

use std::path::Path;
use std::time::Duration;

use mcp_tasks_store::StoreError;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, params};

use crate::schema::{APPLICATION_ID, MIGRATIONS, Migration, latest_version};

fn open_error(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Open { path: path.display().to_string(), reason: reason.into() }
}

fn not_ours(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::NotOurs { path: path.display().to_string(), reason: reason.into() }
}

/// Maps an error met while first reading the file: SQLite says "not a
/// database" for a file of any other format.
fn read_error(path: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => not_ours(path, "the file is not an SQLite database"),
        _ => open_error(path, e.to_string()),
    }
}

/// Opens (creating if needed) the read-write connection, checks the file is
/// ours, sets WAL with full fsync, and migrates it.
pub(crate) fn open_writer(path: &Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    if path.is_dir() {
        return Err(open_error(path, "it is a directory; give the path of a database file"));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(open_error(path, format!("{} is not an existing directory", parent.display())));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e.to_string()))?;
    conn.busy_timeout(busy_timeout).map_err(|e| open_error(path, e.to_string()))?;
    stable_plans(&conn, path)?;
    let version = check_ours(&conn, path)?;
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)).map_err(|e| read_error(path, e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(open_error(path, format!("cannot switch to WAL journaling (got {mode:?})")));
    }
    for (pragma, value) in [("synchronous", "FULL"), ("foreign_keys", "ON"), ("temp_store", WRITER_TEMP_STORE)] {
        conn.pragma_update(None, pragma, value).map_err(|e| open_error(path, format!("PRAGMA {pragma}: {e}")))?;
    }
    migrate(&conn, path, version)?;
    Ok(conn)
}

/// Where the writer keeps its temporary files, the sub-journal above all
/// (`PRAGMA temp_store`). Every savepoint and every statement with a
/// trigger copies each page it first touches into the sub-journal; a group
/// commit's run of jobs under one savepoint passes SQLite's 64 KiB spill
/// threshold within a few jobs, and on a file that meant two `pwrite`s per
/// page into a temporary file: 34 system calls a trivial task, more kernel
/// time in the writer thread than user time (strace and per-thread CPU,
/// docs/benchmark-history.md, 2026-12-07). In memory it is a copy. A savepoint's
/// sub-journal only ever holds the pages one batch touched (at most
/// `MAX_BATCH` jobs), so the memory is small and freed at each commit.
const WRITER_TEMP_STORE: &str = "MEMORY";

/// Bytes of the database file a read connection maps into memory (`PRAGMA
/// mmap_size`). Mapped, a page is read where the operating system caches
/// it, with no system call and no copy into the connection's own page
/// cache; without it each of the pool's readers keeps its own 2 MB cache
/// and a poll of a random task in a large file mostly misses it
/// (`tasks/get` slowed as the store grew while its instructions barely
/// did). Pages still in the WAL are read as before. The mapping is address
/// space, not memory: what it uses is the shared page cache. Readers open
/// the file through `mcp-tasks-sqlite-map`'s VFS, so the pool shares one
/// mapping, kept across commits: SQLite's own maps once per connection and
/// unmaps at the first read after any commit, so a large file was faulted
/// in again by every reader after every poll flush
/// (docs/benchmark-history.md, 2026-12-07, shared mapping).
pub(crate) const READER_MMAP_BYTES: i64 = mcp_tasks_sqlite_map::MAP_BYTES as i64;

/// Opens a read-only connection to a database [`open_writer`] prepared.
pub(crate) fn open_reader(path: &Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let vfs = mcp_tasks_sqlite_map::register().map_err(|e| open_error(path, e.to_string()))?;
    let conn = Connection::open_with_flags_and_vfs(path, flags, vfs).map_err(|e| open_error(path, e.to_string()))?;
    conn.busy_timeout(busy_timeout).map_err(|e| open_error(path, e.to_string()))?;
    stable_plans(&conn, path)?;
    conn.pragma_update(None, "mmap_size", READER_MMAP_BYTES)
        .map_err(|e| open_error(path, format!("PRAGMA mmap_size: {e}")))?;
    Ok(conn)
}

/// Turns on SQLite's query planner stability guarantee. The bundled SQLite
/// is built with `SQLITE_ENABLE_STAT4`, under which a bound value that could
/// change a plan (the claim's `run_at <= ?` and `LIMIT ?`, a sweep's instant)
/// makes every new binding re-prepare the cached statement: profiles showed
/// re-preparing the claim was most of the server's work. With the guarantee
/// a statement keeps the plan it was prepared with; every plan here is fixed
/// by its partial index anyway (see `query_plans.rs`).
fn stable_plans(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(|e| open_error(path, format!("cannot enable the query planner stability guarantee: {e}")))?;
    Ok(())
}

/// The schema version of an mcp-tasks file (0 for an empty file), or why
/// the file is someone else's.
fn check_ours(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let app_id: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).map_err(|e| read_error(path, e))?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| read_error(path, e))?;
    if app_id == APPLICATION_ID {
        if version > latest_version() {
            return Err(not_ours(
                path,
                format!(
                    "its schema version {version} is newer than this build understands ({}); upgrade mcp-tasks",
                    latest_version()
                ),
            ));
        }
        return Ok(version);
    }
    if app_id != 0 {
        return Err(not_ours(path, format!("its application_id is {app_id:#010x}, not mcp-tasks' {APPLICATION_ID:#010x}")));
    }
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 5")
        .map_err(|e| read_error(path, e))?;
    let names: Vec<String> =
        stmt.query_map([], |r| r.get(0)).and_then(|rows| rows.collect()).map_err(|e| read_error(path, e))?;
    if !names.is_empty() {
        return Err(not_ours(
            path,
            format!("it is an SQLite database of another application (it holds {})", names.join(", ")),
        ));
    }
    if version != 0 {
        return Err(not_ours(path, format!("it is an empty SQLite database with user_version {version}")));
    }
    Ok(0)
}

/// Runs every migration after `from`, each in its own transaction. The
/// version is read again under the write lock, so two processes opening a
/// fresh file at once migrate it once.
fn migrate(conn: &Connection, path: &Path, from: i64) -> Result<(), StoreError> {
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(from.max(0) as usize) {
        let to = index as i64 + 1;
        let step = || -> Result<(), String> {
            let sql = |sql: &str| conn.execute_batch(sql).map_err(|e| e.to_string());
            sql("BEGIN IMMEDIATE")?;
            let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| e.to_string())?;
            if current < to {
                match migration {
                    Migration::Sql(statements) => sql(statements)?,
                    Migration::EditTableText { table, from, to } => edit_table_text(conn, table, from, to)?,
                }
                sql(&format!("PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {to};"))?;
            }
            sql("COMMIT")
        };
        if let Err(e) = step() {
            if !conn.is_autocommit() {
                // Undo the half-done migration; the previous version stays intact.
                let _ = conn.execute_batch("ROLLBACK");
            }
            return Err(open_error(path, format!("migration to schema version {to} failed: {e}")));
        }
    }
    Ok(())
}

/// SQLite's documented way to change a table's text when every stored row
/// already meets the change ("Making Other Kinds Of Table Schema Changes"):
/// edit `sqlite_schema` under `writable_schema`, then move `schema_version`
/// on, so every connection (this one too) parses the schema again before
/// its next statement. A table that already reads `to` needs nothing; one
/// holding neither text is refused. Runs inside the migration's transaction.
fn edit_table_text(conn: &Connection, table: &str, from: &str, to: &str) -> Result<(), String> {
    let edit = || -> rusqlite::Result<usize> {
        let schema_version: i64 = conn.pragma_query_value(None, "schema_version", |r| r.get(0))?;
        conn.pragma_update(None, "writable_schema", true)?;
        let edited = conn.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, ?2, ?3) \
             WHERE type = 'table' AND name = ?1 AND instr(sql, ?2) > 0",
            params![table, from, to],
        )?;
        if edited == 1 {
            conn.pragma_update(None, "schema_version", schema_version + 1)?;
        }
        conn.pragma_update(None, "writable_schema", false)?;
        // Reading the schema now meets the moved cookie and parses it again,
        // so no statement prepared later starts from the old text.
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))?;
        Ok(edited)
    };
    let holds = |text: &str| {
        conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1 AND instr(sql, ?2) > 0",
            params![table, text],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| e.to_string())
    };
    match edit() {
        Ok(1) => Ok(()),
        Ok(_) if holds(to)? == 1 => Ok(()),
        // Nothing was changed; the caller rolls the transaction back.
        Ok(_) => Err(format!("table {table}'s definition holds neither the text to replace nor its replacement: {from}")),
        Err(e) => {
            let _ = conn.pragma_update(None, "writable_schema", false);
            Err(e.to_string())
        }
    }
}
