#!/usr/bin/env bash
# End-to-end CPU throughput, ggserve bench side by side with llama.cpp's llama-bench (docs/performance.md,
# section "End to end"): prompt processing (ppP) and generation (tgN) tokens/s of the TinyLlama-shaped
# models in three weight types, with the same flags for both tools.
#
#   bench/cpu_tinyllama.sh [BUILD_DIR [BASELINE_BUILD_DIR]]          (default: build)
# With a baseline build (e.g. of the previous commit), its ggserve runs first on each model, in the
# same conditions, and the table gets "before" columns.
# Environment: MODELS_DIR (default /work/models), TYPES (default "q4_0 q8_0 q4_k"), THREADS (default 2),
# PP (default 512), TG (default 128), REPS (default 3), EXTRA (more flags for both, e.g. "-fa 1"),
# LLAMA_BENCH (default /work/llama.cpp/build/bin/llama-bench; skipped when it is not there).
#
# The machine's load average is printed before and after each model: the numbers mean little on a
# machine that is busy with something else.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MODELS_DIR=${MODELS_DIR:-/work/models}
TYPES=${TYPES:-q4_0 q8_0 q4_k}
THREADS=${THREADS:-2}
PP=${PP:-512}
TG=${TG:-128}
REPS=${REPS:-3}
EXTRA=${EXTRA:-}
LLAMA_BENCH=${LLAMA_BENCH:-/work/llama.cpp/build/bin/llama-bench}
BASE=${2:-}
BIN="$BUILD/bin/ggserve"
[ -x "$BIN" ] || { echo "no $BIN: build it first (ninja -C $BUILD ggserve)" >&2; exit 1; }
have_llama=0
[ -x "$LLAMA_BENCH" ] && have_llama=1

load() { cut -d' ' -f1-3 /proc/loadavg; }

# Prints "ppT/s tgT/s" from a JSON report of either tool (both write avg_ts per test).
rates() {
    python3 -c '
import json, sys
pp = tg = float("nan")
for r in json.load(sys.stdin):
    if r["n_prompt"] > 0 and r["n_gen"] == 0: pp = r["avg_ts"]
    if r["n_gen"] > 0 and r["n_prompt"] == 0: tg = r["avg_ts"]
print(f"{pp:.1f} {tg:.1f}")'
}

flags=(-t "$THREADS" -p "$PP" -n "$TG" -r "$REPS" -o json)
# shellcheck disable=SC2206
extra=($EXTRA)
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, flags: ${flags[*]:0:8} ${EXTRA}"
echo
if [ -n "$BASE" ]; then
    echo "| model | before pp$PP | before tg$TG | ggserve pp$PP | ggserve tg$TG | llama.cpp pp$PP | llama.cpp tg$TG | load before / after |"
    echo "|---|---:|---:|---:|---:|---:|---:|---|"
else
    echo "| model | ggserve pp$PP | ggserve tg$TG | llama.cpp pp$PP | llama.cpp tg$TG | load before / after |"
    echo "|---|---:|---:|---:|---:|---|"
fi
for t in $TYPES; do
    model="$MODELS_DIR/synth-tinyllama-$t.gguf"
    [ -f "$model" ] || { echo "| $t | (no $model) | | | | |"; continue; }
    before=$(load)
    base_cols=
    if [ -n "$BASE" ]; then
        read -r base_pp base_tg < <("$BASE/bin/ggserve" bench -m "$model" "${flags[@]}" "${extra[@]}" 2>/dev/null | rates)
        base_cols="$base_pp | $base_tg | "
    fi
    read -r our_pp our_tg < <("$BIN" bench -m "$model" "${flags[@]}" "${extra[@]}" 2>/dev/null | rates)
    ref_pp=- ref_tg=-
    if [ "$have_llama" = 1 ]; then
        read -r ref_pp ref_tg < <("$LLAMA_BENCH" -m "$model" "${flags[@]}" "${extra[@]}" 2>/dev/null | rates)
    fi
    echo "| $t | $base_cols$our_pp | $our_tg | $ref_pp | $ref_tg | $before / $(load) |"
done
