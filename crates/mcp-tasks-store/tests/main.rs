//! The integration tests of `mcp-tasks-store`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod memory_conformance;
mod memory_props;
