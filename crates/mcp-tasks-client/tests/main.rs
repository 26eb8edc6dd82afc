//! The integration tests of `mcp-tasks-client`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod support;

mod book;
mod dedup;
mod follow_failures;
mod pacing;
mod poller_e2e;
