#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS: builds tests/fuzz/fuzz_TARGET.cpp with clang's libFuzzer, ASan and UBSan
# (into build-fuzz/) and runs it for SECONDS on a copy of its seed corpus (tests/fuzz/corpus/TARGET).
# Targets: gbnf, regex, json_schema. Exit status non-zero when the fuzzer finds a crash, a leak, a
# sanitizer report or a timeout (the whole report is printed; the reproducer is left in build-fuzz/TARGET/).
# FUZZ_SEED and FUZZ_RUNS (optional) fix the random seed and the number of inputs, so that a run can be
# repeated exactly (CI uses both: a red CI must not depend on luck).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
src=tests/fuzz/fuzz_${target}.cpp
[[ -f $src ]] || { echo "no fuzz target '$target' ($src)" >&2; exit 2; }
command -v clang++ >/dev/null || { echo "clang++ is needed (apt-get install clang)" >&2; exit 2; }

out=build-fuzz/${target}
mkdir -p "$out/corpus" build-fuzz/obj
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I. -Iggml/include)
# The engine's grammar sources, compiled once for all targets (again only when a source is newer).
objs=()
for f in engine/grammar/*.cpp; do
    o=build-fuzz/obj/$(basename "${f%.cpp}").o
    if [[ ! -f $o || $f -nt $o ]]; then clang++ "${flags[@]}" -c "$f" -o "$o"; fi
    objs+=("$o")
done
clang++ "${flags[@]}" -fsanitize=fuzzer "$src" "${objs[@]}" -o "$out/fuzz_${target}"
cp -n tests/fuzz/corpus/"$target"/* "$out/corpus/" 2>/dev/null || true
cd "$out"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ./"fuzz_${target}" -max_total_time="$seconds" ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 corpus > fuzz.log 2>&1 || { cat fuzz.log; exit 1; }
grep -E '^(Done|stat::)' fuzz.log
