//! Read connections through the VFS, against a real WAL-mode file that a
//! plain connection writes and checkpoints: every read sees every commit,
//! pages come from one mapping per file, and that mapping outlives commits.

use std::path::{Path, PathBuf};

use mcp_tasks_sqlite_map::{MAP_BYTES, file_stats, register};
use rusqlite::{Connection, OpenFlags};

/// Rows of about a kilobyte, so a few hundred of them fill many pages.
const ROW_BYTES: usize = 1000;

fn writer(path: &Path) -> Connection {
    let conn = Connection::open(path).expect("open writer");
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY, body BLOB NOT NULL);",
    )
    .expect("set up");
    conn
}

fn reader(path: &Path, mmap_size: i64) -> Connection {
    let vfs = register().expect("register the VFS");
    let conn = Connection::open_with_flags_and_vfs(path, OpenFlags::SQLITE_OPEN_READ_ONLY, vfs).expect("open reader");
    conn.pragma_update(None, "mmap_size", mmap_size).expect("set mmap_size");
    conn
}

/// Appends `rows` rows numbered on from what is stored; each body is its
/// number's byte repeated, so a reader can check every byte it reads.
fn append(conn: &Connection, rows: i64) {
    let start: i64 = conn.query_row("SELECT coalesce(max(n), 0) FROM t", [], |r| r.get(0)).expect("max");
    let tx = conn.unchecked_transaction().expect("begin");
    for n in start + 1..=start + rows {
        tx.execute("INSERT INTO t (n, body) VALUES (?1, ?2)", rusqlite::params![n, vec![(n % 251) as u8; ROW_BYTES]])
            .expect("insert");
    }
    tx.commit().expect("commit");
}

/// A database in a new temporary directory holding `rows` checkpointed
/// rows (in the file, not the WAL), and the connection that wrote them.
fn checkpointed(name: &str, rows: i64) -> (tempfile::TempDir, PathBuf, Connection) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    let w = writer(&path);
    append(&w, rows);
    checkpoint(&w);
    (dir, path, w)
}

fn checkpoint(conn: &Connection) {
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).expect("checkpoint");
}

/// How many rows the reader sees, having checked every body byte by byte.
fn checked_rows(conn: &Connection) -> i64 {
    let mut stmt = conn.prepare_cached("SELECT n, body FROM t ORDER BY n").expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    let mut seen = 0;
    while let Some(row) = rows.next().expect("row") {
        let n: i64 = row.get(0).expect("n");
        let body: Vec<u8> = row.get(1).expect("body");
        assert_eq!(n, seen + 1, "rows in order, none missing");
        assert!(body.len() == ROW_BYTES && body.iter().all(|b| *b == (n % 251) as u8), "row {n}'s body is what was written");
        seen = n;
    }
    seen
}

#[test]
fn a_reader_sees_every_commit_through_the_mapping() {
    let (_dir, path, w) = checkpointed("seen.db", 300);
    let r = reader(&path, MAP_BYTES as i64);
    assert_eq!(checked_rows(&r), 300, "checkpointed rows, read from the file");
    let after_first = file_stats(&path).expect("the file is mapped");
    assert!(after_first.pages_served > 50, "pages came from the mapping: {after_first:?}");

    append(&w, 100);
    assert_eq!(checked_rows(&r), 400, "a commit still in the WAL");
    checkpoint(&w);
    append(&w, 5);
    assert_eq!(checked_rows(&r), 405, "the file grew past the length the mapping knew, and a newer commit");
    let after = file_stats(&path).expect("still mapped");
    assert_eq!(after.address, after_first.address, "the same mapping after three commits and two checkpoints");
    assert!(after.pages_served > after_first.pages_served + 50, "the grown file's pages came from it too: {after:?}");
}

#[test]
fn readers_of_one_file_share_one_mapping_until_the_last_closes() {
    let (_dir, path, w) = checkpointed("shared.db", 50);
    let first = reader(&path, MAP_BYTES as i64);
    let second = reader(&path, MAP_BYTES as i64);
    let stats = file_stats(&path).expect("mapped");
    assert_eq!(stats.connections, 2, "both readers hold the one mapping: {stats:?}");
    for round in 1..=20 {
        append(&w, 3);
        if round % 5 == 0 {
            checkpoint(&w);
        }
        assert_eq!(checked_rows(&first), 50 + 3 * round);
        assert_eq!(checked_rows(&second), 50 + 3 * round);
        assert_eq!(file_stats(&path).expect("mapped").address, stats.address, "round {round}: not mapped again");
    }
    drop(first);
    assert_eq!(file_stats(&path).expect("mapped").connections, 1);
    drop(second);
    assert_eq!(file_stats(&path), None, "unmapped with the last reader");
}

#[test]
fn mmap_size_reads_back_and_zero_reads_without_the_mapping() {
    let (_dir, path, _writer) = checkpointed("unmapped.db", 100);
    let r = reader(&path, 1 << 20);
    let limit: i64 = r.pragma_query_value(None, "mmap_size", |row| row.get(0)).expect("read mmap_size");
    assert_eq!(limit, 1 << 20, "the connection's own limit");
    r.pragma_update(None, "mmap_size", 0).expect("turn mapping off");
    assert_eq!(checked_rows(&r), 100);
    let stats = file_stats(&path).expect("the file is open through the VFS");
    assert_eq!(stats.pages_served, 0, "with mmap_size 0 every page is read with xRead: {stats:?}");
}

#[test]
fn a_small_limit_maps_only_the_front_of_the_file() {
    let (_dir, path, _writer) = checkpointed("front.db", 200);
    let r = reader(&path, 64 * 1024);
    assert_eq!(checked_rows(&r), 200);
    let stats = file_stats(&path).expect("mapped");
    assert!(stats.pages_served > 0 && stats.pages_declined > 0, "the front served, the rest declined: {stats:?}");
}

/// A writer appending and checkpointing while two readers read through
/// the one mapping: every read sees a whole prefix of the rows, each byte
/// as written, and never fewer rows than it saw before.
#[test]
fn readers_stay_consistent_while_a_writer_commits_and_checkpoints() {
    let (_dir, path, w) = checkpointed("busy.db", 20);
    let writing = std::thread::spawn({
        let path = path.clone();
        move || {
            let w = writer(&path);
            for round in 0..150 {
                append(&w, 4);
                if round % 7 == 0 {
                    checkpoint(&w);
                }
            }
        }
    });
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                let r = reader(&path, MAP_BYTES as i64);
                let mut last = 0;
                for _ in 0..60 {
                    let seen = checked_rows(&r);
                    assert!(seen >= last, "a later read saw fewer rows ({seen} after {last})");
                    last = seen;
                }
                last
            })
        })
        .collect();
    writing.join().expect("writer");
    for reading in readers {
        reading.join().expect("reader");
    }
    let r = reader(&path, MAP_BYTES as i64);
    assert_eq!(checked_rows(&r), 20 + 150 * 4);
    drop(w);
}

/// A file opened for writing through the VFS keeps SQLite's own methods:
/// a connection that writes gets no shared mapping; a read connection's
/// `VACUUM INTO` (the store's backup), whose target it opens for writing,
/// still copies every row.
#[test]
fn a_file_opened_for_writing_is_not_mapped() {
    let (dir, path, _writer) = checkpointed("written.db", 30);
    let vfs = register().expect("register the VFS");
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let writing = Connection::open_with_flags_and_vfs(&path, flags, vfs).expect("open for writing");
    writing.pragma_update(None, "mmap_size", MAP_BYTES as i64).expect("set mmap_size");
    append(&writing, 10);
    assert_eq!(checked_rows(&writing), 40);
    assert_eq!(file_stats(&path), None, "a connection that writes maps nothing through the VFS");
    drop(writing);

    let r = reader(&path, MAP_BYTES as i64);
    assert_eq!(file_stats(&path).expect("the reader maps the file").connections, 1);
    let copy = dir.path().join("copy.db");
    r.execute("VACUUM INTO ?1", [copy.to_str().expect("a UTF-8 path")]).expect("vacuum into");
    assert_eq!(checked_rows(&reader(&copy, MAP_BYTES as i64)), 40, "the copy holds every row");
}
