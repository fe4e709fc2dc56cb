#!/usr/bin/env bash
# The GPU checks, run on a machine with an NVIDIA GPU over binaries built elsewhere (docs/cuda.md, "Running
# on a GPU"): every CUDA test (each test case in its own process, so a crash or hang names its test), the
# offload goldens, the server's goldens alone and concurrently at full offload, the architecture goldens
# through the server with -ngl 99, and `ggserve bench -ngl 99` on TinyLlama-shaped models.
#   scripts/gpu/pack.sh            (here: the libraries, models, goldens into .gpu/)
#   scripts/gpu/check.sh [STEPS]   (there, from the repository root; carry .gpu and build-cuda/bin)
# STEPS: any of "cuda model server archs bench sanitize profile cpu" (default: the first five). $OUT (default
# /tmp/gpu-out) gets summary.txt, bench.md and logs.tgz (every log), few files, as the device tool wants.
# "cpu" is for the machine's host CPU, not the GPU (an Intel Xeon with AMX on the H200 machines): the kernel
# tests and the CPU goldens at its best level, read bandwidth, and bench/cpu_compare.sh beside llama.cpp
# (.gpu/llamacpp.tar.xz from pack.sh); CPU_THREADS (default "2 16") and CPU_TYPES pick the table's runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-/tmp/gpu-out}
STEPS=${1:-cuda model server archs bench}
LOG=${LOG:-/tmp/gpu-logs}
rm -rf "$LOG"; mkdir -p "$LOG"
JOBS=${JOBS:-4}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
BIN=$ROOT/build-cuda/bin
SH=$ROOT/.gpu/shared
export LD_LIBRARY_PATH=$ROOT/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# The test binaries look for the models in /work/main/../shared (compiled in).
mkdir -p /work/main 2>/dev/null; [ -e /work/shared ] || ln -s "$SH" /work/shared
summary=$LOG/summary.txt; : > "$summary"
say() { echo "$*" | tee -a "$summary"; }
step() { case " $STEPS " in *" $1 "*) return 0;; *) return 1;; esac; }

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$summary"
lscpu | grep -m1 'Model name' | tee -a "$summary"
if ! ldd "$BIN/ggserve" | grep -q 'not found'; then :; else
    # The CUDA libraries of the Python wheels, where the toolkit's own are not on the library path.
    for d in $(python3 -c 'import nvidia, os; p = nvidia.__path__[0]; print(" ".join(os.path.join(p, x, "lib") for x in os.listdir(p)))' 2>/dev/null); do
        LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
    done
    ldd "$BIN/ggserve" | grep 'not found' | tee -a "$summary"
fi

# Models: the synthetic ones are generated here (same command, same bytes: checked by sha256).
gen() {  # gen OUTFILE ARGS...
    local out=$1; shift
    [ -f "$out" ] || "$PYTHON" scripts/gpu/synth_compat.py "$SH/tools" "$@" -o "$out" >/dev/null
}
V=$SH/models/vocab
M=$SH/models/synth
(
    for t in f16 q8_0 q4_0 q4_k; do gen "$M/synth-tiny-$t.gguf" --vocab "$V/ggml-vocab-llama-spm.gguf" --shape tiny --type "$t" --seed 1 & done
    gen "$M/synth-qwen2-q8_0.gguf" --arch qwen2 --vocab "$V/ggml-vocab-gpt-2.gguf" --type q8_0 &
    gen "$M/synth-qwen3-q4_k.gguf" --arch qwen3 --vocab "$V/ggml-vocab-llama-spm.gguf" --shape mini256 --head-dim 128 --type q4_k &
    gen "$M/synth-phi3-q8_0.gguf" --arch phi3 --vocab "$V/ggml-vocab-phi-3.gguf" --type q8_0 &
    gen "$M/synth-gemma2-q8_0.gguf" --arch gemma2 --vocab "$V/ggml-vocab-llama-spm.gguf" --layers 26 --type q8_0 &
    gen "$M/synth-gemma3-q8_0.gguf" --arch gemma3 --vocab "$V/ggml-vocab-llama-spm.gguf" --layers 6 --head-dim 64 --type q8_0 &
    gen "$M/synth-llama-yarn-q8_0.gguf" --arch llama-yarn --vocab "$V/ggml-vocab-llama-spm.gguf" --type q8_0 &
    gen "$M/synth-llama-rope-freqs-q8_0.gguf" --arch llama-rope-freqs --vocab "$V/ggml-vocab-llama-spm.gguf" --type q8_0 &
    gen "$M/synth-llama-moe-q8_0.gguf" --arch llama-moe --vocab "$V/ggml-vocab-llama-spm.gguf" --type q8_0 &
    gen "$M/synth-qwen3moe-q8_0.gguf" --arch qwen3moe --vocab "$V/ggml-vocab-llama-spm.gguf" --type q8_0 &
    gen "$M/synth-bert-f16.gguf" --arch bert --vocab "$V/ggml-vocab-bert-bge.gguf" --ctx 512 --type f16 &
    wait
) 2>&1 | tee "$LOG/gen-small.log"
if step bench || step profile || step cpu; then
    for t in q4_0 q8_0 q4_k; do gen "$M/synth-tinyllama-$t.gguf" --vocab "$V/ggml-vocab-llama-spm.gguf" --shape tinyllama --type "$t" & done
    gen_big=$!
fi
for g in "$SH"/golden/synth-*.greedy.json; do
    f=$M/$(basename "$g" .greedy.json).gguf
    [ -f "$f" ] || continue
    want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model_sha256"])' "$g")
    [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$want" ] || say "MODEL MISMATCH: $f is not the golden's model"
done

# One test case of a Catch binary in its own process; prints its result line.
run_one() {  # run_one BINARY LOGDIR TIMEOUT INDEX NAME
    local bin=$1 dir=$2 to=$3 i=$4 t=$5 esc start rc r
    # Catch v2 test specs: ',' separates names, '[' starts a tag, '"' quotes, '\' escapes the next character.
    esc=$(printf '%s' "$t" | sed 's/[\\,["]/\\&/g')
    start=$(date +%s%N)
    timeout -k 5 "$to" "$bin" "$esc" > "$dir/$i.log" 2>&1; rc=$?
    case $rc in 0) r=PASS;; 77) r=SKIP;; 124|137) r=TIMEOUT;; *) r="FAIL($rc)";; esac
    # A spec that matched nothing "passes" without running anything: count it as a failure.
    grep -q 'No test cases matched' "$dir/$i.log" && r=NOMATCH
    printf '%-9s %7.1fs  %s  [%s.log]\n' "$r" "$(( ($(date +%s%N) - start) / 1000000 ))e-3" "$t" "$i"
}
export -f run_one

# Every test case of BINARY matching SPEC, JOBS at a time, one process each.
run_cases() {  # run_cases NAME BINARY SPEC TIMEOUT
    local name=$1 bin=$2 spec=$3 to=$4
    mkdir -p "$LOG/$name"
    "$bin" --list-test-names-only "$spec" | sed '/^$/d' > "$LOG/$name/list.txt"
    awk '{print NR; print}' "$LOG/$name/list.txt" |
        xargs -d '\n' -n 2 -P "$JOBS" bash -c 'run_one "$0" "$1" "$2" "$3" "$4"' "$bin" "$LOG/$name" "$to" |
        sort -k3 > "$LOG/$name/results.txt"
    say "== $name: $(grep -c '^PASS' "$LOG/$name/results.txt") passed, $(grep -vc '^PASS' "$LOG/$name/results.txt") not"
    grep -v '^PASS' "$LOG/$name/results.txt" | tee -a "$summary"
    # The end of each failure's log, in the summary.
    grep -v '^PASS\|^SKIP' "$LOG/$name/results.txt" | sed 's/.*\[\(.*\)\]$/\1/' | while read -r f; do
        echo "---- $name/$f" | tee -a "$summary"; tail -40 "$LOG/$name/$f" | tee -a "$summary"
    done
}

NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
if step sanitize; then
    # memcheck over whole models and the attention kernels, beside the other steps (it is slow).
    # SAN_SPECS: the test specs, one per line (default: a whole model offloaded, attention, and the kernels
    # of the newer architectures); SAN_TOOLS: compute-sanitizer's tools (default memcheck; racecheck finds
    # shared-memory hazards, synccheck barrier misuse). Every pair runs side by side.
    SAN_SPECS=${SAN_SPECS:-$'CUDA: stories260K goldens with -ngl 2 and full offload\n[flash_attn]\n[mul_mat_id]\n[top_k]\n[rope]\n[norm]\n[elementwise]'}
    (
        for tool in ${SAN_TOOLS:-memcheck}; do
            while IFS= read -r spec; do
                bin=$BIN/test_cuda; case $spec in CUDA:*) bin=$BIN/test_model;; esac
                ( timeout -k 5 150 "$SAN" --tool "$tool" --error-exitcode 9 "$bin" "$spec" \
                      > "$LOG/sanitize-$tool-$(echo "$spec" | tr -c 'a-z0-9' _).log" 2>&1
                  echo "sanitize $tool $spec: rc $?" ) &
            done <<< "$SAN_SPECS"
        done
        wait
    ) > "$LOG/sanitize.txt" 2>&1 &
    san_pid=$!
fi

if step cuda; then run_cases cuda "$BIN/test_cuda" '*' 180; fi
if step model; then run_cases model "$BIN/test_model" "[cuda]" 240; fi

if step server; then
    # Full and partial offload, flash attention, the KV cache on the host (-nkvo), and multi-token steps
    # on the device: a draft model (also offloaded) and lookahead must not change a greedy token.
    for args in "-ngl 99 -np 4 -b 64 -ub 32" "-ngl 99 -np 4 -b 64 -ub 32 -fa on" "-ngl 2 -np 4 -b 64 -ub 32" \
        "-ngl 99 -nkvo -np 4 -b 64 -ub 32" "-ngl 99 -np 4 -b 64 -ub 32 -md $SH/models/stories260K-q8_0.gguf -ngld 99" \
        "-ngl 99 -np 4 -b 64 -ub 32 --spec-type lookahead"; do
        say "server $args:"
        # shellcheck disable=SC2086
        timeout -k 5 120 python3 scripts/gpu/server_goldens.py "$BIN/ggserve" "$SH/golden/stories260K.greedy.json" \
            "$SH/models/stories260K.gguf" $args 2>&1 | tail -5 | tee -a "$summary"
    done
fi

if step archs; then
    port=18231
    for g in qwen2-q8_0 qwen3-q4_k phi3-q8_0 gemma2-q8_0 gemma3-q8_0 llama-yarn-q8_0 llama-rope-freqs-q8_0 \
        llama-moe-q8_0 qwen3moe-q8_0 tiny-q8_0; do
        [ -f "$M/synth-$g.gguf" ] || { say "archs: no synth-$g.gguf"; continue; }
        "$BIN/ggserve" serve -m "$M/synth-$g.gguf" -ngl 99 -np 1 -c 2048 --port $port > "$LOG/archs-$g.log" 2>&1 &
        pid=$!
        for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
        timeout -k 5 90 python3 "$SH/tools/compare_golden.py" --url "http://127.0.0.1:$port" --cache-prompt \
            --golden "$SH/golden/synth-$g.greedy.json" --tol 0.3 2>&1 | tail -3 | tee -a "$summary"
        kill $pid; wait $pid 2>/dev/null
    done
    # The encoder (LayerNorm, GELU, non-causal attention, pooling) fully offloaded.
    for pooling in mean cls; do
        "$BIN/ggserve" serve -m "$M/synth-bert-f16.gguf" -ngl 99 --embedding --pooling $pooling -c 512 --port $port \
            > "$LOG/archs-bert-$pooling.log" 2>&1 &
        pid=$!
        for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
        timeout -k 5 60 python3 "$SH/tools/compare_embeddings.py" --url "http://127.0.0.1:$port" \
            --golden "$SH/golden/synth-bert-f16.embeddings.json" --pooling $pooling 2>&1 | tail -2 | tee -a "$summary"
        kill $pid; wait $pid 2>/dev/null
    done
fi

if step bench; then
    wait $gen_big 2>/dev/null; wait
    models=$(ls "$M"/synth-tinyllama-*.gguf | paste -sd,)
    timeout -k 5 300 "$BIN/ggserve" bench -m "$models" -ngl 99 -p 512 -n 128 -r 3 -fa 0,1 2>&1 | tee "$LOG/bench.md" | tail -20 | tee -a "$summary"
fi
if step sanitize; then
    wait $san_pid; cat "$LOG/sanitize.txt" >> "$summary"
    grep -h "ERROR SUMMARY\|Invalid\|out of bounds" "$LOG"/sanitize-*.log | sort | uniq -c | head -20 | tee -a "$summary"
fi
if step cpu; then
    # The kernels and goldens first (the synthetic TinyLlama models are written meanwhile), then the timed
    # part on a quiet machine: bandwidth, kernels at each level, and the table beside llama.cpp.
    say "cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx512f|avx512_vnni|avx512_bf16|avx512_fp16|avx_vnni|amx_tile|amx_int8|amx_bf16)$' | paste -sd' ')"
    lscpu > "$LOG/lscpu.txt"
    "$BIN/bench_kernels" q4_0 --seconds 0.01 2>&1 | head -1 | tee -a "$summary"
    run_cases kernels "$BIN/test_kernels" '*' 300
    GGML_CPU_FEATURES=amx run_cases model-cpu "$BIN/test_model" '[golden]~[cuda],[invariance]~[cuda],[attention]~[cuda],[embeddings]~[cuda]' 300
    wait $gen_big 2>/dev/null; wait
    say "load: $(cat /proc/loadavg)"
    "$BIN/bench_bandwidth" 1 2 4 8 16 2>&1 | tee -a "$summary"
    for level in avx512 amx; do
        "$BIN/bench_kernels" q4_0 q8_0 q4_K --level $level --seconds 0.2 2>&1 | grep "^q.* $level " | tee -a "$summary"
    done
    mkdir -p /tmp/llamacpp && tar -C /tmp/llamacpp -xJf .gpu/llamacpp.tar.xz
    printf '#!/bin/sh\nLLAMACPP_DIR=/tmp/llamacpp exec %s/bench/llamacpp.sh llama-bench "$@"\n' "$ROOT" > /tmp/llama-bench
    chmod +x /tmp/llama-bench
    for t in ${CPU_THREADS:-2 16}; do
        THREADS=$t TYPES=${CPU_TYPES:-q4_0 q8_0 q4_k} DEPTH=${CPU_DEPTH:-0} MODELS_DIR=$M \
            timeout -k 5 400 bench/cpu_compare.sh -B build-cuda /tmp/llama-bench 2>&1 | tee "$LOG/cpu-compare-t$t.md" | tee -a "$summary"
    done
fi
if step profile; then
    # Per-kernel GPU time of decode and of a 512-token prompt (Nsight Compute, one metric: kernels run
    # serialized, so only their own durations mean anything).
    m=$M/synth-tinyllama-q4_0.gguf
    wait
    # -c: the first kernels only (the warm-up run's, then the measured ones'); the rest runs unprofiled.
    for what in "decode 900 -p 0 -n 4" "prefill 1400 -p 512 -n 0"; do
        set -- $what; name=$1; count=$2; shift 2
        timeout -k 5 120 "$NCU" --metrics gpu__time_duration.sum --csv -c "$count" --log-file "$LOG/ncu-$name.csv" \
            "$BIN/ggserve" bench -m "$m" -ngl 99 -r 1 "$@" > "$LOG/ncu-$name.out" 2>&1
        say "profile $name: rc $?, $(grep -c gpu__time_duration "$LOG/ncu-$name.csv" 2>/dev/null) kernels"
        python3 scripts/gpu/ncu_summary.py "$LOG/ncu-$name.csv" 12 2>&1 | tee -a "$summary"
    done
fi
say "== done"
cp "$summary" "$OUT/"; [ -f "$LOG/bench.md" ] && cp "$LOG/bench.md" "$OUT/"
tar -C "$LOG" -czf "$OUT/logs.tgz" .
