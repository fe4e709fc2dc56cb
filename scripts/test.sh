#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: unit tests, integration tests against the real
# binary, the web UI in a headless browser, and the parser tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer, and the server's threads under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

scripts/setup.sh
# The docker step's slow part is I/O (debootstrap, apt in the image builds): it runs beside the CPU-bound
# builds, and the docker step below finds those layers cached. Its failure only loses the head start:
# the docker step builds whatever is missing and reports for itself.
docker_prep_log=$(mktemp /tmp/ggserve-docker-prepare.XXXXXX)
timeout -k 60 900 scripts/test_docker.sh --prepare >"$docker_prep_log" 2>&1 &
docker_prep_pid=$!
trap 'kill "$docker_prep_pid" 2>/dev/null || true' EXIT  # a failed build does not leave it running
scripts/build.sh

echo "== parser tests under ASan/UBSan =="
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGGSERVE_SANITIZE=ON >/dev/null
ninja -C build-asan -j"$JOBS" test_gguf test_hostile test_tokenizer test_grammar
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j"$JOBS" --output-on-failure -L 'gguf|hostile|tokenizer|grammar' --timeout 1800

# The server's threads under ThreadSanitizer (scripts/test_tsan.sh: its own build, 4-7 min on 2 cores, then
# the concurrency-heavy integration tests, ~1-2 min); bounded, a hang fails the step.
echo "== server threads under ThreadSanitizer =="
tsan_start=$SECONDS
timeout -k 60 1800 scripts/test_tsan.sh
echo "ThreadSanitizer step: $((SECONDS - tsan_start)) s"

# libFuzzer targets (tests/fuzz/, docs/reliability.md) under ASan/UBSan: a bounded smoke run of 20-40 s each, not
# the long recorded runs. clang comes from setup.sh's packages; without it the step says so.
if command -v clang++ >/dev/null; then
    echo "== fuzz targets (fixed seed, bounded input counts) =="
    fuzz_start=$SECONDS
    # Built first, outside the time limits below: the limits bound a run, not a build (a loaded machine
    # took over 400 s to build the request_options target alone).
    cmake -S tests/fuzz -B build-fuzz/cmake -G Ninja -DCMAKE_CXX_COMPILER=clang++ >/dev/null
    ninja -C build-fuzz/cmake -j"$JOBS" >/dev/null
    # A fixed seed and input count: the same inputs on every run (new findings come from longer runs). The
    # counts follow each target's speed; the time limit only guards against a hang. One target per core at
    # once (each run is single-threaded; its lines carry the target's name); any failure fails the step.
    printf '%s\n' gbnf:150000 regex:150000 json_schema:150000 gguf:50000 http:150000 request_options:100000 \
           jinja:40000 chat_parsers:150000 |
        xargs -P "$JOBS" -I{} sh -c 't={}; FUZZ_SEED=1 FUZZ_RUNS=${t#*:} timeout -k 30 400 scripts/fuzz.sh "${t%%:*}" 300'
    echo "fuzz step: $((SECONDS - fuzz_start)) s"
else
    echo "== fuzz targets: not run (no clang++ on this machine) =="
fi

# The CUDA backend is built on every run, for one architecture (sm_90) to keep the build short; its GPU
# tests run when a device is present and are reported as skipped (with the reason) otherwise.
if [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "== CUDA backend: build (sm_90) and GPU tests =="
    cuda_start=$SECONDS
    cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
    ninja -C build-cuda -j"$JOBS" ggserve test_cuda
    ctest --test-dir build-cuda -j"$JOBS" --output-on-failure -L cuda --timeout 900
    echo "CUDA step: $((SECONDS - cuda_start)) s"
else
    echo "== CUDA backend: not built (no /usr/local/cuda/bin/nvcc on this machine) =="
fi

# Docker images, compose.yaml and the 3-replica scale-out stack (docs/deploy.md), for real: about 2 min
# with the images cached, 10 from nothing (debootstrap, apt in the image builds); bounded at 15 min.
echo "== docker: images, compose, scale-out behind HAProxy =="
docker_start=$SECONDS
if wait "$docker_prep_pid"; then
    grep -E '^(built|base-image|== docker: prepared)' "$docker_prep_log" || true
else
    echo "docker prepare failed (exit $?); the docker step builds everything itself. Its log:"
    tail -20 "$docker_prep_log"
fi
rm -f "$docker_prep_log"
docker_prep_pid=""
timeout -k 60 900 scripts/test_docker.sh
echo "docker step: $((SECONDS - docker_start)) s"

# The chat UI in headless chromium against the real server (screenshots in build/webui-test/).
echo "== web UI: browser tests =="
scripts/test_webui.sh build

# The main suite runs last, so that its summary ends the log.
echo "== unit and integration tests (Release) =="
ctest --test-dir build -j"$JOBS" --output-on-failure --timeout 900

echo "== all tests passed =="
