//! The writer keeps its sub-journal in memory (`PRAGMA temp_store`): a
//! savepoint that touches more pages than SQLite's spill threshold writes no
//! temporary file.

use crate::open::open_writer;

/// Open files of this process that are unnamed temporary files (SQLite
/// opens its sub-journal with `O_TMPFILE`, shown as `/dir/#inode (deleted)`).
fn unnamed_temporary_files() -> Vec<String> {
    std::fs::read_dir("/proc/self/fd")
        .expect("list /proc/self/fd")
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .map(|target| target.display().to_string())
        .filter(|target| target.ends_with(" (deleted)") && target.rsplit('/').next().is_some_and(|f| f.starts_with('#')))
        .collect()
}

#[test]
fn a_savepoint_past_the_spill_threshold_writes_no_temporary_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let writer = open_writer(&dir.path().join("journal.db"), crate::DEFAULT_BUSY_TIMEOUT).expect("open writer");
    let temp_store: i64 = writer.pragma_query_value(None, "temp_store", |r| r.get(0)).expect("read temp_store");
    assert_eq!(temp_store, 2, "MEMORY");
    // 400 rows of 1 KB: ≈ 100 pages that exist before the savepoint, so
    // changing them all journals ≈ 400 KB, past the 64 KiB spill threshold.
    writer
        .execute_batch(
            "CREATE TABLE scratch (x INTEGER PRIMARY KEY, body TEXT);
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 400)
             INSERT INTO scratch SELECT x, printf('%1000d', x) FROM n;",
        )
        .expect("fill");
    let before = unnamed_temporary_files();
    writer.execute_batch("BEGIN; SAVEPOINT run; UPDATE scratch SET body = printf('%1000d', -x);").expect("update");
    let during = unnamed_temporary_files();
    writer.execute_batch("RELEASE run; COMMIT;").expect("commit");
    let opened: Vec<_> = during.iter().filter(|f| !before.contains(f)).collect();
    assert!(opened.is_empty(), "the sub-journal spilled into {opened:?}");
}
