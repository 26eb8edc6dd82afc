#!/usr/bin/env bash
# Fuzzes the three cargo-fuzz targets in fuzz/ (libFuzzer), each for a
# bounded time, and fails on the first crash, leak of a panic, or timeout:
#   jsonrpc_request  request bodies through the server's envelope check
#   task_params      task answers and tools/call params as the client and
#                    the idempotency fingerprint read them
#   policy_file      policy files (TOML and JSON) as `serve --config` reads them
#
#   FUZZ_SECONDS=30 scripts/fuzz.sh            # the default: 30 s per target
#   FUZZ_SECONDS=3600 scripts/fuzz.sh policy_file   # a longer run of one target
#
# Each run starts from the committed seeds (fuzz/corpus/TARGET/) plus what
# earlier runs here found (fuzz/target/corpus/TARGET/, not committed). A
# crash leaves its input in fuzz/artifacts/TARGET/; replay it with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run -O -a -s none TARGET fuzz/artifacts/TARGET/crash-…
# (from fuzz/) and add a minimized copy to the seeds once fixed.
#
# cargo-fuzz passes nightly -Z flags; RUSTC_BOOTSTRAP=1 lets the stable
# toolchain take them. No address sanitizer (`-s none`): the code is
# `#![forbid(unsafe_code)]` Rust, so what it would add is build time; panics,
# overflow checks (`-a`) and libFuzzer's timeouts and memory limit still
# stop the run.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${FUZZ_SECONDS:-30}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(jsonrpc_request task_params policy_file)
command -v cargo-fuzz >/dev/null \
  || { echo "cargo-fuzz is missing: cargo install cargo-fuzz --locked --version 0.13.2" >&2; exit 1; }

export RUSTC_BOOTSTRAP=1
flags=(-O -a -s none)
start=$(date +%s)
cargo fuzz build "${flags[@]}"
echo "fuzz: built the targets in $(( $(date +%s) - start )) s"
for target in "${targets[@]}"; do
  found="target/corpus/$target"
  mkdir -p "$found"
  echo "fuzz: $target for ${seconds} s"
  # New inputs go to the first directory; the committed seeds stay as they are.
  cargo fuzz run "${flags[@]}" "$target" "$found" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1
done
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, no crash ($(( $(date +%s) - start )) s in all)"
