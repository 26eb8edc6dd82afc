#!/usr/bin/env bash
# The project's whole test suite. First what holds the line on the code
# itself: no import circle inside a crate (scripts/import_cycles.py), every
# integration test file compiled into its crate's one test binary
# (scripts/check_test_modules.py), formatting (rustfmt.toml), the MSRV (scripts/check-msrv.sh), clippy
# with every warning an error (incompatible_msrv included), and rustdoc with
# every warning an error (broken links included). Then every crate's tests
# (unit, property, doc, conformance of every store, end-to-end over loopback
# HTTP, crash/restart on real processes), then the official MCP conformance
# suite against `mcp-tasks serve --tools conformance`. Last, under CI
# (CI=true) or when asked (`scripts/test.sh --fuzz`), the fuzz targets for
# FUZZ_SECONDS (30) each (scripts/fuzz.sh; it needs cargo-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/import_cycles.py
scripts/check_test_modules.py
cargo fmt --all --check
scripts/check-msrv.sh
cargo clippy --workspace --all-targets --locked -- -D warnings
# Once as a user builds them, once with the feature-gated fixtures
# (conformance suite, test databases, tool sets) as docs.rs would.
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --locked
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --all-features --locked

cargo test --workspace --locked
scripts/conformance.sh
if [ "${CI:-}" = true ] || [ "${1:-}" = --fuzz ]; then
  scripts/fuzz.sh
fi
