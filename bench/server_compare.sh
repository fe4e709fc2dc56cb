#!/usr/bin/env bash
# ggserve serve and llama.cpp's llama-server side by side under the same load: aggregate tokens/s, TTFT
# and inter-token latency p50/p99 at 1, 4 and 16 concurrent streams, and with long prompts arriving
# mid-run (docs/performance.md, "Server side by side"). Builds nothing; llama-server runs through
# bench/llamacpp.sh (`bench/llamacpp.sh fetch` first).
#
#   bench/server_compare.sh [BUILD_DIR]          (default: build)
# Environment: MODEL (default /work/models/synth-tinyllama-q4_0.gguf; make it with
# ../shared/tools/synth_gguf.py --vocab ../shared/models/vocab/ggml-vocab-llama-spm.gguf --shape tinyllama
# --type q4_0 -o FILE), THREADS (2), CTX (32768: 2048 per slot), PARALLEL (16), STREAMS (1,4,16), MAX_TOKENS (64),
# REQUESTS_PER_STREAM (2), LONG_PROMPT (1000), CAP (16), REPEAT (2), NO_LLAMA_SERVER (set: ggserve only).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
args=(--bin "$BUILD/bin/ggserve" --model "${MODEL:-/work/models/synth-tinyllama-q4_0.gguf}"
      --threads "${THREADS:-2}" --ctx "${CTX:-32768}" --parallel "${PARALLEL:-16}" --streams "${STREAMS:-1,4,16}"
      --max-tokens "${MAX_TOKENS:-64}" --requests-per-stream "${REQUESTS_PER_STREAM:-2}"
      --long-prompt "${LONG_PROMPT:-1000}" --cap "${CAP:-16}" --repeat "${REPEAT:-2}")
[ -n "${NO_LLAMA_SERVER:-}" ] && args+=(--no-llama-server)
exec python3 bench/server_compare.py "${args[@]}"
