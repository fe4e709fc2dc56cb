#!/usr/bin/env bash
# CPU throughput side by side with llama.cpp (docs/performance.md, "CPU side by side"): ggserve bench and
# one or more llama-bench binaries on the TinyLlama-shaped models, pp512, tg128 and pp512 at a depth of
# 4096 cached tokens, in interleaved rounds (ggserve, llama-bench 1, llama-bench 2, ggserve, ...) so every
# tool sees the same noise; the table keeps each tool's best round and the ratio to the best llama.cpp.
# Builds nothing.
#
#   bench/cpu_compare.sh [-B BUILD_DIR] LLAMA_BENCH [LLAMA_BENCH ...]
# Environment: MODELS_DIR (default /work/ext/models) with synth-tinyllama-{q4_0,q8_0,q4_k,f16}.gguf
# (make them with ../shared/tools/synth_gguf.py --shape tinyllama --type T), TYPES (default
# "q4_0 q8_0 q4_k f16"), THREADS (2), ROUNDS (2), REPS (2 repetitions inside each run), PP (512), TG (128;
# 0 skips generation), DEPTH (4096; 0 skips the depth test).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
if [ "${1:-}" = "-B" ]; then BUILD=$2; shift 2; fi
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
LLAMA=("$@")
MODELS_DIR=${MODELS_DIR:-/work/ext/models}
TYPES=${TYPES:-q4_0 q8_0 q4_k f16}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
REPS=${REPS:-2}
PP=${PP:-512}
TG=${TG:-128}
DEPTH=${DEPTH:-4096}
BIN="$BUILD/bin/ggserve"
[ -x "$BIN" ] || { echo "no $BIN: build it first" >&2; exit 1; }
for l in "${LLAMA[@]}"; do [ -x "$l" ] || { echo "not an executable: $l" >&2; exit 1; }; done

load() { cut -d' ' -f1-3 /proc/loadavg; }
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|avx512_fp16|avx_vnni|amx_tile|amx_int8|amx_bf16)$' | tr '\n' ' ')
echo "$(date -u '+%Y-%m-%d %H:%M UTC') | CPU: $cpu_model ($(nproc) CPUs) | flags: $cpu_flags"
echo "threads $THREADS, $ROUNDS interleaved rounds of -r $REPS, best round kept; load before: $(load)"
echo

# Prints "test avg_ts" lines from a JSON report of either tool (both write the same fields).
rates() {
    python3 -c '
import json, sys
text = sys.stdin.read()
for r in json.loads(text[text.index("["):]):
    d = r.get("n_depth", 0)
    name = ("pp%d" % r["n_prompt"]) if r["n_gen"] == 0 else ("tg%d" % r["n_gen"])
    print((name + "@d%d" % d) if d else name, r["avg_ts"])'
}

# run K MODEL: the tests of one round with tool K (0: ggserve bench, i: LLAMA[i-1]), "test rate" lines.
run() {
    local cmd
    if [ "$1" = 0 ]; then cmd=("$BIN" bench); else cmd=("${LLAMA[$(($1 - 1))]}"); fi
    "${cmd[@]}" -m "$2" -t "$THREADS" -p "$PP" -n "$TG" -r "$REPS" -o json 2>/dev/null | rates
    if [ "$DEPTH" -gt 0 ]; then
        "${cmd[@]}" -m "$2" -t "$THREADS" -p "$PP" -n 0 -d "$DEPTH" -r "$REPS" -o json 2>/dev/null | rates
    fi
}

tests=("pp$PP")
[ "$TG" -gt 0 ] && tests+=("tg$TG")
[ "$DEPTH" -gt 0 ] && tests+=("pp$PP@d$DEPTH")
header="| model | test | ggserve |"
sep="|---|---|---:|"
for i in "${!LLAMA[@]}"; do header+=" llama.cpp $((i + 1)) |"; sep+="---:|"; done
header+=" ggserve / best llama.cpp |"
sep+="---:|"
echo "llama.cpp $(for i in "${!LLAMA[@]}"; do printf '%d = %s  ' $((i + 1)) "${LLAMA[$i]}"; done)"
echo
echo "$header"
echo "$sep"
for t in $TYPES; do
    model="$MODELS_DIR/synth-tinyllama-$t.gguf"
    if [ ! -f "$model" ]; then
        echo "| $t | (missing: python3 ../shared/tools/synth_gguf.py --vocab ../shared/models/vocab/ggml-vocab-llama-spm.gguf --shape tinyllama --type $t -o $model) |"
        continue
    fi
    declare -A best=()
    for _ in $(seq "$ROUNDS"); do
        for k in $(seq 0 ${#LLAMA[@]}); do
            while read -r name rate; do
                key="$k/$name"
                prev=${best[$key]:-0}
                best[$key]=$(python3 -c "print(max($prev, $rate))")
            done < <(run "$k" "$model")
        done
    done
    for name in "${tests[@]}"; do
        row="| $t | ${name/@d/ @ d} | $(printf '%.1f' "${best[0/$name]:-0}") |"
        top=0
        for i in "${!LLAMA[@]}"; do
            r=${best[$((i + 1))/$name]:-0}
            row+=" $(printf '%.1f' "$r") |"
            top=$(python3 -c "print(max($top, $r))")
        done
        row+=" $(python3 -c "print('%.2f' % (${best[0/$name]:-0} / $top) if $top > 0 else '-')") |"
        echo "$row"
    done
    unset best
done
echo
echo "load after: $(load)"
