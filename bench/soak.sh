#!/usr/bin/env bash
# Soak test (issue 13, docs/reliability.md): starts `ggserve serve` on stories260K and runs bench/soak.py
# against it: CLIENTS streaming clients for MINUTES with a mix of normal streams, streams abandoned mid-way
# (the client closes its socket), JSON-Schema-constrained streams and oversized prompts (longer than a
# slot's context: 400). Every 30 s a table row: the server's RSS, open descriptors and threads, the TTFT
# and inter-token latency percentiles of the normal streams, the load average. At the end: slopes after
# warm-up, totals, 5xx count, idle vs loaded ITL p99; the server is stopped and must exit cleanly.
#
#   bench/soak.sh [BUILD_DIR]        (default: build)
# Environment: MINUTES (60), CLIENTS (16), NP (8 slots), CTX (8192 in all), CRAM (256 MiB of host-memory
# prompt cache; its size is a column, and the RSS slope is also given net of it), THREADS (1), INTERVAL (30),
# WARMUP (5 minutes), THINK (0.1 s mean pause between a client's requests), OUT (summary JSON; default
# soak-summary.json in the build directory), MODEL, EXTRA (more server arguments, e.g.
# "--max-prefill-tokens 8").
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SHARED=${GGSERVE_SHARED_DIR:-$(cd .. && pwd)/shared}
MODEL=${MODEL:-$SHARED/models/stories260K.gguf}
MINUTES=${MINUTES:-60}
CLIENTS=${CLIENTS:-16}
NP=${NP:-8}
CTX=${CTX:-8192}
# The host-memory prompt cache fills up to its limit (8192 MiB by default) with the soak's distinct prompts:
# memory kept on purpose, which would hide a leak's slope for hours. A small limit fills during warm-up.
CRAM=${CRAM:-256}
THREADS=${THREADS:-1}
INTERVAL=${INTERVAL:-30}
WARMUP=${WARMUP:-5}
THINK=${THINK:-0.1}
OUT=${OUT:-$BUILD/soak-summary.json}
BIN="$BUILD/bin/ggserve"

log=$(mktemp)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; fi
    rm -f "$log"
}
trap cleanup EXIT

# shellcheck disable=SC2086 # EXTRA is a list of arguments
"$BIN" serve -m "$MODEL" -t "$THREADS" -np "$NP" -c "$CTX" -cram "$CRAM" --port 0 --metrics ${EXTRA:-} 2>"$log" &
server_pid=$!
for _ in $(seq 600); do
    grep -q "ready:" "$log" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1  # waiting for the server's log line, not synchronizing with it
done
port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$log" | head -1)
[ -n "$port" ] || { echo "the server did not start:"; cat "$log"; exit 1; }

echo "soak: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)),"
echo "      ggserve $(git rev-parse --short HEAD 2>/dev/null || echo '?'): -m $(basename "$MODEL") -t $THREADS -np $NP -c $CTX -cram $CRAM ${EXTRA:-};"
echo "      $CLIENTS clients for $MINUTES min, samples every $INTERVAL s, warm-up $WARMUP min"
status=0
/usr/bin/python3 bench/soak.py --port "$port" --pid "$server_pid" --ctx-per-slot $((CTX / NP)) --clients "$CLIENTS" \
    --minutes "$MINUTES" --interval "$INTERVAL" --warmup-minutes "$WARMUP" --think "$THINK" --json "$OUT" || status=$?

# What the server logged as errors (the deliberate 400s are not logged as errors).
echo "server log: $(grep -c -E '\[(error|critical)\]' "$log" || true) error lines"
grep -E '\[(error|critical)\]' "$log" | head -5 || true
kill -INT "$server_pid"
wait "$server_pid" && echo "server exited cleanly" || { echo "server exit status $?"; status=1; }
server_pid=
exit $status
