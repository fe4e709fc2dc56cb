#!/usr/bin/env bash
# Server benchmarks (docs/performance.md, section "Server"):
#  1. Single stream: tokens/s of one greedy request through HTTP (`/completion`, non-streaming) against
#     `ggserve run` on the same model, prompt and length (both report the generation rate, so a run that
#     ends early at end-of-text still compares).
#  2. Mixed load: `ggserve loadgen` (N concurrent streams, a mix of short and long prompts) against
#     `ggserve serve -np 4`, once without and once with --max-prefill-tokens, printing both JSON reports.
#
#   bench/server_load.sh [BUILD_DIR]          (default: build)
# Environment: MODEL (default stories260K), THREADS (default 1), CAP (default 32), REQUESTS (default 64),
# LONG_RATIO (default 0.5: enough long prompts that their stalls reach the ITL p99), N_PREDICT (default
# 256, the single stream).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SHARED=${GGSERVE_SHARED_DIR:-$(cd .. && pwd)/shared}
MODEL=${MODEL:-$SHARED/models/stories260K.gguf}
THREADS=${THREADS:-1}
CAP=${CAP:-32}
REQUESTS=${REQUESTS:-64}
N_PREDICT=${N_PREDICT:-256}
LONG_RATIO=${LONG_RATIO:-0.5}
BIN="$BUILD/bin/ggserve"
PROMPT="Once upon a time, there was a little girl named Lily."

server_pid=
log=$(mktemp)
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -f "$log"
}
trap cleanup EXIT

# Starts the server with the given extra flags and sets $port once it is ready.
start_server() {
    "$BIN" serve -m "$MODEL" -t "$THREADS" --port 0 "$@" 2>"$log" &
    server_pid=$!
    for _ in $(seq 600); do
        grep -q "ready:" "$log" && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$log"; exit 1; }
        sleep 0.1
    done
    port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$log" | head -1)
    [ -n "$port" ] || { echo "the server did not start:"; cat "$log"; exit 1; }
}
stop_server() {
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

echo "== single stream: ggserve run vs HTTP /completion ($N_PREDICT tokens, greedy, 5 runs each, median) =="
run_tps=()
for _ in 1 2 3 4 5; do
    run_tps+=("$("$BIN" run -m "$MODEL" -p "$PROMPT" -n "$N_PREDICT" --temp 0 -t "$THREADS" --json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; t=json.load(sys.stdin)["timings"]; print(t["predicted_per_second"])')")
done
start_server -np 1
http_tps=()
for _ in 1 2 3 4 5; do
    http_tps+=("$(curl -s "http://127.0.0.1:$port/completion" -H 'Content-Type: application/json' \
        -d "{\"prompt\": \"$PROMPT\", \"n_predict\": $N_PREDICT, \"temperature\": 0, \"ignore_eos\": true, \"cache_prompt\": false}" |
        /usr/bin/python3 -c 'import json,sys; t=json.load(sys.stdin)["timings"]; print(t["predicted_per_second"])')")
done
stop_server
/usr/bin/python3 - "${run_tps[*]}" "${http_tps[*]}" <<'PY'
import statistics, sys
run = [float(x) for x in sys.argv[1].split()]
http = [float(x) for x in sys.argv[2].split()]
r, h = statistics.median(run), statistics.median(http)
print(f"ggserve run: {r:.0f} tok/s   HTTP: {h:.0f} tok/s   HTTP/run: {100 * h / r:.0f}%")
PY

for cap in 0 "$CAP"; do
    if [ "$cap" = 0 ]; then
        echo "== loadgen: -np 4, no prefill cap =="
        start_server -np 4 -c 4096
    else
        echo "== loadgen: -np 4, --max-prefill-tokens $cap =="
        start_server -np 4 -c 4096 --max-prefill-tokens "$cap"
    fi
    "$BIN" loadgen --port "$port" -c 4 -n "$REQUESTS" --max-tokens 64 --long-prompt 400 --long-ratio "$LONG_RATIO"
    stop_server
done
