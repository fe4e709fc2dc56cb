#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: unit tests, integration tests against the real
# binary, and the parser tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

scripts/setup.sh
scripts/build.sh

echo "== unit and integration tests (Release) =="
ctest --test-dir build -j"$JOBS" --output-on-failure --timeout 900

echo "== parser tests under ASan/UBSan =="
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGGSERVE_SANITIZE=ON >/dev/null
ninja -C build-asan -j"$JOBS" test_gguf test_hostile test_tokenizer test_grammar
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j"$JOBS" --output-on-failure -L 'gguf|hostile|tokenizer|grammar' --timeout 1800

echo "== all tests passed =="
