#!/usr/bin/env bash
# The server's threads under ThreadSanitizer: ggserve built with -fsanitize=thread (build-tsan/), the CPU
# thread pool's unit test, and the integration tests tagged [threads] (concurrent streams, drafts beside
# other slots, cancellation, slow and vanishing clients, sleep, the router's and the MCP servers' threads)
# run from the Release build against that server. Any report fails the step and is printed; the reports
# also make the instrumented process exit with 66, which the tests see.
#   scripts/test_tsan.sh          (after scripts/build.sh: it uses build/bin/test_integration)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGGSERVE_TSAN=ON >/dev/null
ninja -C build-tsan -j"$JOBS" ggserve test_ggml

reports=$(mktemp -d /tmp/ggserve-tsan.XXXXXX)
trap 'rm -rf "$reports"' EXIT
export TSAN_OPTIONS="log_path=$reports/report suppressions=$PWD/tests/tsan.supp history_size=4"

# GCC 12's TSan runtime cannot map its shadow memory under the larger address randomization of some
# kernels (vm.mmap_rnd_bits above 28: "unexpected memory mapping"); its processes run without it where the
# personality call is allowed (children inherit it).
norand=()
if setarch "$(uname -m)" -R true 2>/dev/null; then norand=(setarch "$(uname -m)" -R); fi

status=0
"${norand[@]}" build-tsan/bin/test_ggml "[threadpool]" || status=1

# The tagged tests by name (ctest runs them two at a time; names are regular expressions to ctest).
# (Catch's listing exits with the number of tests it listed; the count below is the check.)
names=$(build/bin/test_integration "[threads]" --list-test-names-only | sed '/^$/d') || true
count=$(printf '%s\n' "$names" | wc -l)
if [ "$count" -lt 10 ]; then
    echo "expected at least 10 integration tests tagged [threads], found $count"
    exit 1
fi
regex=$(printf '%s\n' "$names" | sed 's/[][\\.^$*+?(){}|]/\\&/g' | paste -sd '|')
GGSERVE_TEST_BINARY=$PWD/build-tsan/bin/ggserve \
    "${norand[@]}" ctest --test-dir build -j"$JOBS" --output-on-failure --timeout 900 -R "^integration/($regex)\$" || status=1
echo "ran $count integration tests against the ThreadSanitizer build"

if compgen -G "$reports/report.*" >/dev/null; then
    echo "ThreadSanitizer reports:"
    cat "$reports"/report.*
    status=1
fi
exit $status
