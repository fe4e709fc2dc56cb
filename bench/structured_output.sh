#!/usr/bin/env bash
# Grammar benchmarks (docs/performance.md, section "Grammar"):
#  1. bench_grammar: per-token cost of constraining the 32000-token vocabulary of synth-tiny-q8_0 with
#     engine/grammars/json.gbnf (apply over the whole vocabulary, and accept).
#  2. Generation speed of stories260K (or $MODEL) through `ggserve serve`, with and without a JSON schema: same
#     prompt, same number of tokens (the schema cannot be finished within it, and the unconstrained run
#     ignores end-of-text), greedy and seeded at temperature 1. Prints the median tokens/s of each and
#     the ratio constrained / unconstrained.
#
#   bench/structured_output.sh [BUILD_DIR]     (default: build; needs ggserve and bench_grammar built)
# Environment: RUNS (default 7), N_PREDICT (default 256), THREADS (default 1), MODEL (default stories260K).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SHARED=${GGSERVE_SHARED_DIR:-$(cd .. && pwd)/shared}
RUNS=${RUNS:-7}
N_PREDICT=${N_PREDICT:-256}
THREADS=${THREADS:-1}

echo "== bench_grammar: json.gbnf, synth-tiny-q8_0 vocabulary =="
"$BUILD/bin/bench_grammar" --vocab "$SHARED/models/synth/synth-tiny-q8_0.gguf" \
    --grammar engine/grammars/json.gbnf --passes 3

MODEL=${MODEL:-$SHARED/models/stories260K.gguf}
echo "== $(basename "$MODEL") through the server: JSON schema vs none =="
log=$(mktemp)
"$BUILD/bin/ggserve" serve -m "$MODEL" -np 1 -c 1024 -t "$THREADS" --port 0 2>"$log" &
server_pid=$!
trap 'kill $server_pid 2>/dev/null; wait $server_pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 600); do
    grep -q "ready:" "$log" && break
    kill -0 $server_pid 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
done
port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$log" | head -1)
[ -n "$port" ] || { echo "the server did not start:"; cat "$log"; exit 1; }

python3 - "$port" "$RUNS" "$N_PREDICT" <<'EOF'
import json, statistics, sys, urllib.request

port, runs, n_predict = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
# At least 64 strings of at least 2 characters: more than n_predict tokens, so the JSON never ends early.
schema = {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 16}, "minItems": 64}


def generate(extra):
    body = {"prompt": "Once upon a time", "n_predict": n_predict, "cache_prompt": False}
    body.update(extra)
    req = urllib.request.Request("http://127.0.0.1:%d/completion" % port, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    r = json.load(urllib.request.urlopen(req))
    if r["timings"]["predicted_n"] != n_predict:
        raise SystemExit("expected %d tokens, got %d: %r" % (n_predict, r["timings"]["predicted_n"], r["content"]))
    return r["timings"]["predicted_per_second"]


generate({"temperature": 0, "ignore_eos": True})  # warm-up
for name, sampling in (("greedy", {"temperature": 0}), ("temperature 1, seed 7", {"temperature": 1.0, "seed": 7})):
    free, constrained = [], []
    for _ in range(runs):  # interleaved, so drifting machine load hits both alike
        free.append(generate(dict(sampling, ignore_eos=True)))
        constrained.append(generate(dict(sampling, json_schema=schema)))
    f, c = statistics.median(free), statistics.median(constrained)
    print("%-22s unconstrained %8.1f t/s   json_schema %8.1f t/s   ratio %.2f" % (name, f, c, c / f))
EOF
