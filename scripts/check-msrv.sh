#!/usr/bin/env bash
# Checks that the workspace's `rust-version` (its MSRV) is true, without a
# second toolchain: every member declares the workspace's rust-version, and no
# package it builds with on this host (normal, build and dev dependencies, as
# locked) declares a newer one. The other half, that our own code calls no
# standard-library item newer than the MSRV, is clippy's `incompatible_msrv`
# lint, which scripts/test.sh runs with warnings denied.
set -euo pipefail
cd "$(dirname "$0")/.."

METADATA=$(mktemp)
trap 'rm -f "$METADATA"' EXIT
host=$(rustc -vV | sed -n 's/^host: //p')
cargo metadata --format-version 1 --locked --filter-platform "$host" >"$METADATA"

python3 - "$METADATA" <<'PY'
import json
import sys

def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))

with open(sys.argv[1]) as f:
    meta = json.load(f)
members = set(meta["workspace_members"])
ours = {p["rust_version"] for p in meta["packages"] if p["id"] in members}
if len(ours) != 1 or None in ours:
    sys.exit(f"MSRV: every member must declare the workspace's rust-version "
             f"(rust-version.workspace = true); found {sorted(map(str, ours))}")
msrv = ours.pop()
newer = sorted(
    f"{p['name']} {p['version']} needs Rust {p['rust_version']}"
    for p in meta["packages"]
    if p["id"] not in members and p.get("rust_version") and version(p["rust_version"]) > version(msrv)
)
if newer:
    sys.exit(f"MSRV: the workspace declares rust-version {msrv}, but these dependencies need a newer Rust:\n  "
             + "\n  ".join(newer))
print(f"MSRV {msrv}: no dependency declares a newer rust-version")
PY
