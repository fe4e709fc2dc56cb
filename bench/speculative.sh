#!/usr/bin/env bash
# Speculative decoding: tokens/s and accepted tokens per target pass, plain vs each drafter, one stream
# and four, story continuation and input-grounded prompts (docs/performance.md, "Speculative decoding").
#
#   bench/speculative.sh [BUILD_DIR]                  (default: build)
# Environment: MODEL (default ../shared/models/stories260K.gguf), DRAFT (default its q8_0 copy),
# N_PREDICT (256), ROUNDS (3), THREADS (2), CONFIGS (all), SERVER_ARGS (more flags for both servers),
# LLAMA_SERVER (a llama-server binary to run side by side with the same flags; skipped when unset or
# missing).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MODEL=${MODEL:-../shared/models/stories260K.gguf}
DRAFT=${DRAFT:-../shared/models/stories260K-q8_0.gguf}
args=(--bin "$BUILD/bin/ggserve" --model "$MODEL" --draft "$DRAFT" --n-predict "${N_PREDICT:-256}"
      --rounds "${ROUNDS:-3}" --threads "${THREADS:-2}")
[ -n "${CONFIGS:-}" ] && args+=(--configs "$CONFIGS")
[ -n "${SERVER_ARGS:-}" ] && args+=(--server-args "$SERVER_ARGS")
if [ -n "${LLAMA_SERVER:-}" ] && [ -x "${LLAMA_SERVER}" ]; then args+=(--llama-server "$LLAMA_SERVER"); fi
exec python3 bench/speculative.py "${args[@]}"
