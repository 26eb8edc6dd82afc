//! Read connections map the database file (`PRAGMA mmap_size`), so polls
//! of a large store read pages from the shared OS page cache; what is still
//! in the WAL, and what a checkpoint moved into the file, reads the same.
//! They open it through the shared-mapping VFS: two readers, one mapping,
//! the same after the writer's commits.

use crate::open::{READER_MMAP_BYTES, open_reader, open_writer};

fn count(conn: &rusqlite::Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM scratch", [], |r| r.get(0)).expect("count")
}

#[test]
fn read_connections_map_the_file_and_see_every_commit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mmap.db");
    let writer = open_writer(&path, crate::DEFAULT_BUSY_TIMEOUT).expect("open writer");
    let reader = open_reader(&path, crate::DEFAULT_BUSY_TIMEOUT).expect("open reader");
    let other = open_reader(&path, crate::DEFAULT_BUSY_TIMEOUT).expect("open a second reader");
    let mapped: i64 = reader.pragma_query_value(None, "mmap_size", |r| r.get(0)).expect("read mmap_size");
    assert_eq!(mapped, READER_MMAP_BYTES, "the reader maps the file");
    let unmapped: i64 = writer.pragma_query_value(None, "mmap_size", |r| r.get(0)).expect("read mmap_size");
    assert_eq!(unmapped, 0, "SQLite's default, which the reader's differs from");

    writer.execute_batch("CREATE TABLE scratch (x INTEGER); INSERT INTO scratch VALUES (1), (2);").expect("write");
    assert_eq!(count(&reader), 2, "commits still in the WAL");
    writer.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO scratch VALUES (3);").expect("checkpoint");
    let mapping = mcp_tasks_sqlite_map::file_stats(&path).expect("the readers map the file through the VFS");
    assert_eq!(mapping.connections, 2, "one mapping for both readers: {mapping:?}");
    assert_eq!(count(&reader), 3, "checkpointed pages, read through the mapping, and a newer commit");
    assert_eq!(count(&other), 3, "the other reader, through the same mapping");
    let after = mcp_tasks_sqlite_map::file_stats(&path).expect("still mapped");
    assert_eq!(after.address, mapping.address, "not mapped again after the commits");
    assert!(after.pages_served > mapping.pages_served, "checkpointed pages came from the mapping: {after:?}");
}
