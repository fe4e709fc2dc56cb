#!/usr/bin/env bash
# ggserve bench side by side with llama.cpp's llama-bench on the architectures of issue 12
# (docs/performance.md, "Architectures side by side"): a Qwen2-0.5B-shaped qwen2 model and a small
# Mixtral-like mixture of experts (qwen3moe, 8 experts, 2 used per token), pp512 and tg128 at 1 and 2
# threads, in interleaved rounds (ggserve then llama.cpp, the order swapped every other round, so both see
# the same noise); the table keeps each tool's best round and the ratio ggserve / llama.cpp. Builds
# nothing; llama-bench runs through bench/llamacpp.sh (`bench/llamacpp.sh fetch` first).
#
#   bench/arch_compare.sh [-B BUILD_DIR]      the comparison
#   bench/arch_compare.sh --make-models       writes the models (numpy's /usr/bin/python3, ~1 min each)
# Environment: MODELS_DIR (default /work/models), MODELS (default "synth-qwen2-0.5b-q8_0
# synth-qwen3moe-8x1024-q8_0"), THREADS ("1 2"), ROUNDS (2), REPS (2 repetitions inside each run), PP (512),
# TG (128), LLAMA_BENCH (default: bench/llamacpp.sh llama-bench), EXTRA (flags for both tools, e.g. "-fa 1").
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
MODELS_DIR=${MODELS_DIR:-/work/models}
MODELS=${MODELS:-synth-qwen2-0.5b-q8_0 synth-qwen3moe-8x1024-q8_0}
THREADS=${THREADS:-1 2}
ROUNDS=${ROUNDS:-2}
REPS=${REPS:-2}
PP=${PP:-512}
TG=${TG:-128}
EXTRA=${EXTRA:-}

# The models: ../shared/tools/synth_gguf.py's qwen2 and qwen3moe presets (random weights, the GGUF keys
# and tensor layout llama.cpp expects, tied embeddings, the GPT-2 vocabulary of 50257 tokens) with two
# shapes it lacks, registered before its main() runs. (n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx):
#   qwen2-0.5b: Qwen2-0.5B's (896, 24 layers, 14 heads / 2 KV of 64, FFN 4864); its vocabulary has 151936
#               tokens, this one 50257, so the output head is a third of Qwen2-0.5B's.
#   moe-1024:   1024 wide, 12 layers, 16 heads / 4 KV of 64; qwen3moe gives it 8 experts of
#               n_ff / 2 = 1024 rows, 2 used per token (Mixtral's routing at a small scale).
#   moe-64x256: many small experts, as Qwen3-30B-A3B (128 of 768, 8 used) at a small scale: 1024 wide,
#               8 layers, 64 experts of n_ff / 2 = 256 rows, 8 used per token (not a default: MODELS=...).
# The last two fields: experts and experts used per token ("-": the preset's).
# synth-gpt-oss-20b-4l-mxfp4 (not a default: MODELS=...) is gpt-oss-20b's layer shape with 4 of its 24
# layers: 2880 wide, 64 heads / 8 KV heads of 64, attention sinks, a window of 128 on every other layer,
# YaRN x32 over 4096, 32 experts of 2880 rows in MXFP4 with biases, 4 used per token; q8_0 elsewhere and the
# GPT-2 vocabulary (gpt-oss has o200k's 201088 tokens). Written by its own writer below (synth_gguf.py has
# no gpt-oss preset): random MXFP4 blocks of a fixed scale, as synth_gguf.py writes random k-quant blocks.
declare -A SPEC=(
    [synth-gpt-oss-20b-4l-mxfp4]="gpt-oss - - - -"
    [synth-qwen2-0.5b-q8_0]="qwen2 qwen2-0.5b q8_0 - -"
    [synth-qwen3moe-8x1024-q8_0]="qwen3moe moe-1024 q8_0 - -"
    [synth-qwen3moe-64x256-q8_0]="qwen3moe moe-64x256 q8_0 64 8"
)
make_gpt_oss() {
    /usr/bin/python3 - "$1" <<'EOF'
import math, sys
import numpy as np
sys.path.insert(0, "../shared/tools")
import synth_gguf as s
E, L, H, KV, D, X, U, F = 2880, 4, 64, 8, 64, 32, 4, 2880
s.TYPES["mxfp4"] = (39, 32, 17)
plain_rows = s.encode_rows
def encode_rows(rng, shape, typ, std):
    if typ != "mxfp4":
        return plain_rows(rng, shape, typ, std)
    # random E2M1 nibbles (mean |value| ~4.5 in the doubled table) under one E8M0 scale near std / 4.5
    b = rng.integers(0, 256, size=(int(np.prod(shape)) // 32, 17), dtype=np.uint8)
    b[:, 0] = 128 + int(round(math.log2(std / 4.5)))
    return b.tobytes()
s.encode_rows = encode_rows
tok = {k: v for k, v in s.read_kv("../shared/models/vocab/ggml-vocab-gpt-2.gguf").items() if k.startswith("tokenizer.")}
V = len(tok["tokenizer.ggml.tokens"][1][1])
P = "gpt-oss."
kv = {"general.architecture": (8, "gpt-oss"), "general.name": (8, "synth-gpt-oss-20b-4l-mxfp4"),
      "general.file_type": (4, 38), P + "context_length": (4, 131072), P + "embedding_length": (4, E),
      P + "block_count": (4, L), P + "feed_forward_length": (4, F), P + "attention.head_count": (4, H),
      P + "attention.head_count_kv": (4, KV), P + "attention.key_length": (4, D),
      P + "attention.value_length": (4, D), P + "rope.dimension_count": (4, D), P + "rope.freq_base": (6, 150000.0),
      P + "rope.scaling.type": (8, "yarn"), P + "rope.scaling.factor": (6, 32.0),
      P + "rope.scaling.original_context_length": (4, 4096), P + "attention.layer_norm_rms_epsilon": (6, 1e-5),
      P + "attention.sliding_window": (4, 128), P + "expert_count": (4, X), P + "expert_used_count": (4, U),
      P + "expert_feed_forward_length": (4, F)}
kv.update(tok)
rE = 1.0 / math.sqrt(E)
W = lambda name, shape, std, typ="q8_0": (name, shape, typ, ("w", std))
N = lambda name, n, g=1.0: (name, (n,), "f32", ("norm", g))
B = lambda name, n, std: (name, (n,), "f32", ("bias", std))
M = lambda name, shape, std: (name, shape, "f32", ("w", std))
t = [W("token_embd.weight", (E, V), 0.5 * rE), N("output_norm.weight", E, 4.0), W("output.weight", (E, V), 0.5 * rE)]
for i in range(L):
    p = f"blk.{i}."
    t += [N(p + "attn_norm.weight", E), W(p + "attn_q.weight", (E, H * D), rE), B(p + "attn_q.bias", H * D, 0.25),
          W(p + "attn_k.weight", (E, KV * D), rE), B(p + "attn_k.bias", KV * D, 0.25),
          W(p + "attn_v.weight", (E, KV * D), rE), B(p + "attn_v.bias", KV * D, 0.25),
          W(p + "attn_output.weight", (H * D, E), 1.0 / math.sqrt(H * D)), B(p + "attn_output.bias", E, 0.1),
          B(p + "attn_sinks.weight", H, 1.5), N(p + "post_attention_norm.weight", E),
          M(p + "ffn_gate_inp.weight", (E, X), 2 * rE), B(p + "ffn_gate_inp.bias", X, 0.5),
          W(p + "ffn_gate_exps.weight", (E, F, X), 2 * rE, "mxfp4"), M(p + "ffn_gate_exps.bias", (F, X), 0.5),
          W(p + "ffn_down_exps.weight", (F, E, X), 0.1 / math.sqrt(F), "mxfp4"), M(p + "ffn_down_exps.bias", (E, X), 0.1),
          W(p + "ffn_up_exps.weight", (E, F, X), 2 * rE, "mxfp4"), M(p + "ffn_up_exps.bias", (F, X), 0.5)]
s.write_gguf(sys.argv[1], kv, t, np.random.default_rng(1))
print("wrote", sys.argv[1])
EOF
}

make_model() {
    local name=$1 arch shape type n_expert n_used
    read -r arch shape type n_expert n_used <<< "${SPEC[$name]}"
    if [ "$arch" = gpt-oss ]; then make_gpt_oss "$MODELS_DIR/$name.gguf"; return; fi
    /usr/bin/python3 - "$arch" "$shape" "$type" "$MODELS_DIR/$name.gguf" "$n_expert" "$n_used" <<'EOF'
import sys
sys.path.insert(0, "../shared/tools")
import synth_gguf as s
s.SHAPES["qwen2-0.5b"] = (896, 24, 14, 2, 4864, 32768)
s.SHAPES["moe-1024"] = (1024, 12, 16, 4, 2048, 4096)
s.SHAPES["moe-64x256"] = (1024, 8, 16, 4, 512, 4096)
arch, shape, typ, out, n_expert, n_used = sys.argv[1:]
if n_expert != "-":
    s.ARCH_HP[arch] = dict(s.ARCH_HP[arch], n_expert=int(n_expert), n_expert_used=int(n_used))
sys.argv = ["synth_gguf.py", "--vocab", "../shared/models/vocab/ggml-vocab-gpt-2.gguf", "--arch", arch,
            "--shape", shape, "--type", typ, "-o", out]
s.main()
EOF
}

if [ "${1:-}" = "--make-models" ]; then
    mkdir -p "$MODELS_DIR"
    for m in $MODELS; do make_model "$m"; done
    exit 0
fi
if [ "${1:-}" = "-B" ]; then BUILD=$2; shift 2; fi
[ $# -eq 0 ] || { sed -n '2,14p' "$0"; exit 2; }
BIN="$BUILD/bin/ggserve"
[ -x "$BIN" ] || { echo "no $BIN: build it first" >&2; exit 1; }
if [ -n "${LLAMA_BENCH:-}" ]; then LLAMA=("$LLAMA_BENCH"); else LLAMA=(bench/llamacpp.sh llama-bench); fi

load() { cut -d' ' -f1-3 /proc/loadavg; }
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|avx512_fp16|avx_vnni|amx_tile|amx_int8|amx_bf16)$' | tr '\n' ' ')
echo "$(date -u '+%Y-%m-%d %H:%M UTC') | CPU: $cpu_model ($(nproc) CPUs) | flags: $cpu_flags"
echo "threads: $THREADS; $ROUNDS interleaved rounds of -r $REPS, best round kept; load before: $(load)"
echo "llama.cpp: ${LLAMA[*]}${EXTRA:+; both tools: $EXTRA}"
echo

# Prints "test avg_ts" lines from a JSON report of either tool (both write llama-bench's fields).
rates() {
    python3 -c '
import json, sys
text = sys.stdin.read()
for r in json.loads(text[text.index("["):]):
    print(("pp%d" % r["n_prompt"]) if r["n_gen"] == 0 else ("tg%d" % r["n_gen"]), r["avg_ts"])'
}

# run K MODEL THREADS: one run of tool K (0: ggserve bench, 1: llama-bench), "test rate" lines.
run() {
    local cmd
    if [ "$1" = 0 ]; then cmd=("$BIN" bench); else cmd=("${LLAMA[@]}"); fi
    # shellcheck disable=SC2086
    "${cmd[@]}" -m "$2" -t "$3" -p "$PP" -n "$TG" -r "$REPS" $EXTRA -o json 2>/dev/null | rates
}

echo "| model | threads | test | ggserve t/s | llama.cpp t/s | ggserve / llama.cpp |"
echo "|---|---:|---|---:|---:|---:|"
for m in $MODELS; do
    model="$MODELS_DIR/$m.gguf"
    if [ ! -f "$model" ]; then
        echo "| $m | (missing: bench/arch_compare.sh --make-models) |"
        continue
    fi
    declare -A best=()
    for round in $(seq "$ROUNDS"); do
        order="0 1"
        [ $((round % 2)) = 0 ] && order="1 0"
        for t in $THREADS; do
            for k in $order; do
                while read -r name rate; do
                    key="$k/$t/$name"
                    best[$key]=$(python3 -c "print(max(${best[$key]:-0}, $rate))")
                done < <(run "$k" "$model" "$t")
            done
        done
    done
    for t in $THREADS; do
        for name in "pp$PP" "tg$TG"; do
            ours=${best[0/$t/$name]:-0} theirs=${best[1/$t/$name]:-0}
            echo "| $m ($(du -m "$model" | cut -f1) MiB) | $t | $name | $(printf '%.1f' "$ours") | $(printf '%.1f' "$theirs") |" \
                "$(python3 -c "print('%.2f' % ($ours / $theirs) if $theirs > 0 else '-')") |"
        done
    done
    unset best
done
echo
echo "load after: $(load)"
