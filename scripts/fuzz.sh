#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS: builds tests/fuzz/fuzz_TARGET.cpp with clang's libFuzzer, ASan and UBSan
# (the tests/fuzz CMake project, into build-fuzz/) and runs it for SECONDS on its seed corpus
# (tests/fuzz/corpus/TARGET) plus what earlier runs added (build-fuzz/TARGET/corpus).
# scripts/fuzz.sh TARGET FILE...: runs the target once on each FILE (a reproducer), with the sanitizers.
# Targets: gbnf, regex, json_schema, gguf, http, request_options, jinja, chat_parsers.
# Exit status non-zero when the fuzzer finds a crash, a leak, a sanitizer report or a timeout (the whole
# report is printed; the reproducer is left in build-fuzz/TARGET/).
# FUZZ_SEED and FUZZ_RUNS (optional) fix the random seed and the number of inputs, and then the run starts
# from the committed seeds only, so that it can be repeated exactly (CI uses both: a red CI must not depend
# on luck or on an earlier run).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/fuzz.sh TARGET SECONDS | scripts/fuzz.sh TARGET FILE..."
target=${1:?$usage}
shift
[[ $# -ge 1 ]] || { echo "$usage" >&2; exit 2; }
[[ -f tests/fuzz/fuzz_${target}.cpp ]] || { echo "no fuzz target '$target' (tests/fuzz/fuzz_${target}.cpp)" >&2; exit 2; }
command -v clang++ >/dev/null || { echo "clang++ is needed (apt-get install clang)" >&2; exit 2; }

root=$PWD
mkdir -p build-fuzz
# Runs of several targets at once (scripts/test.sh) configure and build one at a time: neither cmake nor
# ninja locks its tree (a configure beside another run's failed with "ninja: error: failed recompaction").
(
    flock 9
    # Configured once (scripts/test.sh does it before the runs); ninja reconfigures on its own when the
    # CMake files change.
    [[ -f build-fuzz/cmake/build.ninja ]] ||
        cmake -S tests/fuzz -B build-fuzz/cmake -G Ninja -DCMAKE_CXX_COMPILER=clang++ >/dev/null
    ninja -C build-fuzz/cmake -j"$(nproc)" "fuzz_${target}" >/dev/null
) 9>build-fuzz/.build.lock
bin=$root/build-fuzz/cmake/bin/fuzz_${target}

# Inputs up to this size: GGUF seeds (vocabularies) and chat templates are larger than the others.
case $target in
    gguf) max_len=32768 ;;
    jinja) max_len=16384 ;;
    *) max_len=4096 ;;
esac
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

if [[ ! $1 =~ ^[0-9]+$ ]]; then
    files=()
    for f in "$@"; do files+=("$(realpath "$f")"); done
    exec "$bin" -timeout=10 -rss_limit_mb=2048 "${files[@]}"
fi
seconds=$1

out=build-fuzz/${target}
mkdir -p "$out"
corpus=$out/corpus
if [[ -n ${FUZZ_SEED:-} ]]; then
    corpus=$out/corpus-seeded
    rm -rf "$corpus"
fi
mkdir -p "$corpus"
cp -n tests/fuzz/corpus/"$target"/* "$corpus/" 2>/dev/null || true
cd "$out"
"$bin" -max_total_time="$seconds" ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -timeout=10 \
    -rss_limit_mb=2048 -max_len=$max_len -print_final_stats=1 "$(basename "$corpus")" > fuzz.log 2>&1 ||
    { sed "s/^/$target: /" fuzz.log; exit 1; }
grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' fuzz.log |
    sed "s/^/$target: /"
