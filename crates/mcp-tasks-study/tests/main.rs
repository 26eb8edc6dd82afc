//! The integration tests of `mcp-tasks-study`, one module per concern, compiled
//! into one test binary (one link instead of one per file).
//! `scripts/check_test_modules.py` fails if a file here is not listed.

mod e1_restart;
mod figures;
mod independent;
mod paper_tables;
mod rng_vectors;
mod shipped_client;
