#!/usr/bin/env bash
# Embedding throughput (docs/performance.md, "Embeddings"): inputs/s and tokens/s of POST /v1/embeddings
# for batches of short and of long inputs, against ggserve and, when LLAMA_SERVER is set, llama.cpp's
# llama-server on the same model with the same flags. Each server is started, warmed up with one
# request, then sent REQS requests of BATCH inputs one after another; the token counts are the
# servers' own usage.prompt_tokens. Builds nothing.
#
#   bench/embeddings.sh [BUILD_DIR]                                  (default: build)
# Environment: MODEL (default ../shared/models/synth/synth-bert-f16.gguf), THREADS (2), BATCH (32),
# REQS (10), SHORT_WORDS (8), LONG_WORDS (100), UB (512: -ub, the longest input), NP (8: -np),
# LLAMA_SERVER (path to llama-server; skipped when unset), PORT (18090).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MODEL=${MODEL:-../shared/models/synth/synth-bert-f16.gguf}
THREADS=${THREADS:-2}
BATCH=${BATCH:-32}
REQS=${REQS:-10}
SHORT_WORDS=${SHORT_WORDS:-8}
LONG_WORDS=${LONG_WORDS:-100}
UB=${UB:-512}
NP=${NP:-8}
PORT=${PORT:-18090}
BIN="$BUILD/bin/ggserve"
[ -x "$BIN" ] || { echo "no $BIN: build it first" >&2; exit 1; }
[ -f "$MODEL" ] || { echo "no model $MODEL" >&2; exit 1; }

FLAGS=(-m "$MODEL" --embeddings --pooling mean -t "$THREADS" -ub "$UB" -b "$UB" -np "$NP" -c $((UB * NP))
       --host 127.0.0.1 --port "$PORT")

run_one() {  # name, command...
    local name=$1; shift
    "$@" "${FLAGS[@]}" > /tmp/bench_embd_$$.log 2>&1 &
    local pid=$!
    trap 'kill $pid 2>/dev/null || true' EXIT
    python3 - "$name" "$PORT" "$BATCH" "$REQS" "$SHORT_WORDS" "$LONG_WORDS" <<'PY'
import json, sys, time, urllib.request, random
name, port, batch, reqs, short_w, long_w = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:])
url = f"http://127.0.0.1:{port}"
deadline = time.time() + 120
while True:  # the server answers /health with 200 once the model is loaded
    try:
        if urllib.request.urlopen(url + "/health", timeout=2).status == 200: break
    except Exception:
        pass
    if time.time() > deadline: sys.exit(f"{name}: server did not start")
    time.sleep(0.2)
words = "once upon a time there was a little girl who lived in a village near the forest".split()
rng = random.Random(1)
def inputs(n_words):
    return [" ".join(rng.choice(words) for _ in range(n_words)) for _ in range(batch)]
def post(body):
    req = urllib.request.Request(url + "/v1/embeddings", json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=600).read())
for label, n_words in (("short", short_w), ("long", long_w)):
    post({"input": inputs(n_words)})  # warm-up
    n_tok, t0 = 0, time.perf_counter()
    for _ in range(reqs):
        n_tok += post({"input": inputs(n_words)})["usage"]["prompt_tokens"]
    dt = time.perf_counter() - t0
    print(f"| {name} | {label} ({n_words} words, ~{n_tok // (reqs * batch)} tokens) | {batch} | {reqs * batch / dt:.1f} | {n_tok / dt:.0f} |")
PY
    kill $pid; wait $pid 2>/dev/null || true
    trap - EXIT
}

echo "| server | inputs | batch | inputs/s | tokens/s |"
echo "|---|---|---|---|---|"
run_one ggserve "$BIN" serve
if [ -n "${LLAMA_SERVER:-}" ]; then run_one llama-server "$LLAMA_SERVER"; fi
