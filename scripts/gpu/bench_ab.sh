#!/usr/bin/env bash
# Two ggserve builds side by side on the GPU, interleaved (A B A B), on the TinyLlama-shaped models that
# scripts/gpu/check.sh makes: `ggserve bench -ngl 99`, prompt processing and generation.
#   scripts/gpu/bench_ab.sh BIN_A BIN_B [TYPES] [ROUNDS]     (TYPES default "q4_0 q8_0", ROUNDS 2)
# Prints one table row per run; the card and CPU first. Carry .gpu (scripts/gpu/pack.sh) and both binaries.
set -uo pipefail
cd "$(dirname "$0")/../.."
A=$1 B=$2 TYPES=${3:-q4_0 q8_0} ROUNDS=${4:-2}
SH=$PWD/.gpu/shared M=$PWD/.gpu/shared/models/synth
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -m1 'Model name'
for t in $TYPES; do
    [ -f "$M/synth-tinyllama-$t.gguf" ] || python3 scripts/gpu/synth_compat.py "$SH/tools" --vocab \
        "$SH/models/vocab/ggml-vocab-llama-spm.gguf" --shape tinyllama --type "$t" -o "$M/synth-tinyllama-$t.gguf" >/dev/null &
done
wait
for r in $(seq "$ROUNDS"); do
    for t in $TYPES; do
        for bin in "$A" "$B"; do
            "$bin" bench -m "$M/synth-tinyllama-$t.gguf" -ngl 99 -p 512 -n 128 -r 3 -o csv 2>/dev/null |
                tail -n +2 | awk -F, -v b="$(basename "$bin")" -v r="$r" '{print "round " r, b, $0}'
        done
    done
done
