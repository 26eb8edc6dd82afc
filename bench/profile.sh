#!/usr/bin/env bash
# Profiles `mcp-tasks serve` on a fixed load with callgrind, which counts
# instructions: the figure does not depend on how busy the machine is, so
# two builds compare on a shared machine where wall-clock time cannot.
#
# usage: bench/profile.sh SCENARIO COUNT [STORED] [-- SERVE FLAGS…]
#   SCENARIO  create | get | e2e (see bench/profile_load.py)
#   COUNT     requests (create, get) or trivial tasks (e2e)
#   STORED    for get: tasks stored first (half finished, half live), by a
#             server run without the profiler, on the same file (default 1)
# env: MCP_TASKS_BIN (default target/release/mcp-tasks; build it with
#      CARGO_PROFILE_RELEASE_DEBUG=line-tables-only for file:line names),
#      OUT (default /tmp/mcp-tasks-profile), CLIENTS (default 16).
#
# Instrumentation is on only while the load runs (not start-up, filling
# or shutdown). Prints the instructions per request and writes
# $OUT/annotate.txt (top functions: self, and inclusive for ours and SQLite) and the raw callgrind file.
set -euo pipefail

scenario=${1:?usage: bench/profile.sh SCENARIO COUNT [STORED] [-- SERVE FLAGS…]}
count=${2:?COUNT}
stored=1
shift 2
if [[ $# -gt 0 && $1 != -- ]]; then stored=$1; shift; fi
[[ $# -gt 0 && $1 == -- ]] && shift
here=$(cd "$(dirname "$0")" && pwd)
bin=${MCP_TASKS_BIN:-$here/../target/release/mcp-tasks}
out=${OUT:-/tmp/mcp-tasks-profile}
clients=${CLIENTS:-16}
rm -rf "$out"
mkdir -p "$out"
db=$out/tasks.db
flags=(serve --listen 127.0.0.1:0 --tools fleet --db "$db" --max-tasks-per-principal 0
       --max-argument-bytes-per-principal 0 --max-connections 4096 "$@")
export RUST_LOG=warn,rmcp=error,mcp_tasks::cmd::serve=info

# Starts the server (under $1… if given) logging into $out/$log; sets pid and url.
start() {
    local log=$out/$1; shift
    "$@" "$bin" "${flags[@]}" 2>"$log" &
    pid=$!
    url=
    for _ in $(seq 1200); do
        url=$(grep -o 'http://[^ ]*' "$log" | head -1 || true)
        [[ -n $url ]] && return
        kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
        sleep 0.1
    done
    echo "the server did not say where it listens" >&2; exit 1
}

stop() {
    kill -TERM "$pid"
    wait "$pid" || true
}

if [[ $scenario == get ]]; then
    start fill.log
    python3 "$here/profile_load.py" "$url" fill "$stored" "$clients" --ids "$out/ids" >/dev/null
    stop
fi

start serve.log valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.out"
callgrind_control -i on "$pid" >/dev/null
case $scenario in
    get) sent=$(python3 "$here/profile_load.py" "$url" get "$count" "$clients" --ids "$out/ids") ;;
    *) sent=$(python3 "$here/profile_load.py" "$url" "$scenario" "$count" "$clients") ;;
esac
callgrind_control -i off "$pid" >/dev/null
stop

# The header's summary is 0 when instrumentation starts off; totals is right.
total=$(awk '/^totals:/ {print $2; exit}' "$out/callgrind.out")
read -r _ creations _ gets <<<"$sent"
requests=$((creations + gets))
{
    echo "== self (exclusive) =="
    callgrind_annotate "$out/callgrind.out" 2>/dev/null | sed -n '/file:function/,$p' | head -45
    echo "== inclusive, this project's code and SQLite =="
    callgrind_annotate --inclusive=yes "$out/callgrind.out" 2>/dev/null | grep -E 'crates/|sqlite3|rusqlite' | head -60
} >"$out/annotate.txt" || true  # head closes the pipes early
echo "scenario $scenario, count $count, stored $stored: $creations creations + $gets gets = $requests requests"
echo "instructions: $total total, $((total / requests)) per request, $((total / count)) per $( [[ $scenario == e2e ]] && echo task || echo request )"
echo "top functions: $out/annotate.txt"
