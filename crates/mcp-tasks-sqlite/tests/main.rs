//! The integration tests of `mcp-tasks-sqlite`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod attempts_migration;
mod conformance;
mod corrupt_rows;
mod deleted_file;
mod differential;
mod expiry_index_migration;
mod group_commit;
mod insert_triggers_migration;
mod locked_writer;
mod open_errors;
mod quota_migration;
mod result_text;
mod serve_lock;
mod status_check_migration;
mod status_count_migration;
mod unreadable_rows;
