//! The integration tests of `mcp-tasks-postgres`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod attempts_migration;
mod clock;
mod conformance;
mod differential;
mod events;
mod group_commit;
mod health;
mod instances;
mod leader;
mod open_errors;
mod quota;
mod reconnect;
