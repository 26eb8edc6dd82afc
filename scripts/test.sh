#!/usr/bin/env bash
# The project's whole test suite: no import circle inside a crate, every crate's tests (unit, property,
# conformance of every store, end-to-end over loopback HTTP, crash/restart on
# real processes), then the official MCP conformance suite against
# `mcp-tasks serve --tools conformance`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/import_cycles.py
cargo test --workspace --locked
scripts/conformance.sh
