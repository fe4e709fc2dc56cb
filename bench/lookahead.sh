#!/usr/bin/env bash
# Lookahead decoding: tokens/s, tokens and accepted branch tokens per target pass, extra tokens evaluated
# per accepted token; plain vs lookahead (adaptive, and the full window on every step), one stream and
# four, story continuation and input-grounded prompts (docs/performance.md, "Lookahead decoding").
#
#   bench/lookahead.sh [BUILD_DIR]                  (default: build)
# Environment: MODEL (default ../shared/models/stories260K.gguf), WNG ("15,5,15": W,N,G), N_PREDICT (256),
# ROUNDS (3), THREADS (2), WORKLOADS (story,grounded,repetitive), CONFIGS (none,lookahead,lookahead-fixed),
# LLAMACPP (a command prefix that runs llama.cpp's programs by name, e.g. bench/llamacpp.sh: adds
# llama-completion and llama-lookahead on the same prompts, one stream). Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MODEL=${MODEL:-../shared/models/stories260K.gguf}
args=(--bin "$BUILD/bin/ggserve" --model "$MODEL" --n-predict "${N_PREDICT:-256}" --rounds "${ROUNDS:-3}"
      --threads "${THREADS:-2}" --wng "${WNG:-15,5,15}")
[ -n "${CONFIGS:-}" ] && args+=(--configs "$CONFIGS")
[ -n "${LLAMACPP:-}" ] && args+=(--llamacpp "$LLAMACPP")
[ -n "${WORKLOADS:-}" ] && args+=(--workloads "$WORKLOADS")
exec python3 bench/lookahead.py "${args[@]}"
