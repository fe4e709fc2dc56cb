#!/usr/bin/env bash
# Dockerfile.cuda where no CUDA base image can be pulled: BuildKit's own parser reads the whole file
# (a syntax error or an unknown flag fails here), then the stages are checked against what the CPU
# Dockerfile guarantees. With GGSERVE_DOCKER_CUDA_STANDIN=1 its stages are also built and run on
# stand-ins for the nvidia/cuda images made from debian:bookworm-slim and this machine's CUDA toolkit
# (slow: kernels compiled for sm_90; not in CI).
set -euo pipefail
cd "$(dirname "$0")/../.."
F=docker/Dockerfile.cuda

# 1. BuildKit parses the file and all its stages before it looks for the target, so a missing target is
#    the only error a well-formed file can give.
out=$(DOCKER_BUILDKIT=1 docker build -f "$F" --target ggserve-parse-check . 2>&1 || true)
grep -q "target stage ggserve-parse-check could not be found" <<<"$out" || { echo "$out" | tail -5; echo "FAIL: $F does not parse"; exit 1; }
echo "cuda: BuildKit parses $F"

# 2. The stages: toolchain and configure with -DGGML_CUDA=ON on the CUDA devel image, the build, and
#    the runtime on the CUDA runtime image, last (the default target), with the same user, health check,
#    stop signal and entry point as the CPU image; every COPY --from names an earlier stage.
python3 - "$F" <<'PY'
import re, shlex, sys
lines, cur = [], ""
for raw in open(sys.argv[1]):
    s = raw.rstrip("\n")
    if not cur and (not s.strip() or s.lstrip().startswith("#")):
        continue
    if s.endswith("\\"):
        cur += s[:-1] + " "
        continue
    lines.append(cur + s)
    cur = ""
stages, errors = [], []
for l in lines:
    word = l.split(None, 1)[0].upper()
    if word == "FROM":
        m = re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?", l, re.I)
        stages.append({"base": m.group(1), "name": m.group(2), "body": []})
    elif stages:
        stages[-1]["body"].append(l)
names = [s["name"] for s in stages]
def need(cond, msg):
    if not cond:
        errors.append(msg)
need(names == ["build-env", "build", "runtime"], f"stages {names}")
by = {s["name"]: s for s in stages}
need(by["build-env"]["base"] == "${CUDA_DEVEL_IMAGE}", "build-env is not on the CUDA devel image")
need(by["build"]["base"] == "build-env", "build does not start from build-env")
need(by["runtime"]["base"] == "${CUDA_RUNTIME_IMAGE}", "runtime is not on the CUDA runtime image")
text = open(sys.argv[1]).read()
need(re.search(r"ARG CUDA_DEVEL_IMAGE=nvidia/cuda:\$\{CUDA_VERSION\}-devel-", text), "devel image is not nvidia/cuda")
need(re.search(r"ARG CUDA_RUNTIME_IMAGE=nvidia/cuda:\$\{CUDA_VERSION\}-runtime-", text), "runtime image is not nvidia/cuda")
need(any("-DGGML_CUDA=ON" in l for l in by["build-env"]["body"]), "no -DGGML_CUDA=ON")
for i, s in enumerate(stages):
    for l in s["body"]:
        for ref in re.findall(r"--from=(\S+)", l):
            need(ref in names[:i], f"stage {s['name']}: COPY --from={ref} is not an earlier stage")
rt = by["runtime"]["body"]
def instr(word):
    return [l for l in rt if l.split(None, 1)[0].upper() == word]
need(instr("USER") == ["USER ggserve"], "runtime user")
need(instr("STOPSIGNAL") == ["STOPSIGNAL SIGTERM"], "stop signal")
need(instr("ENTRYPOINT") == ['ENTRYPOINT ["/usr/local/bin/ggserve", "serve"]'], "entry point")
need(any("/health" in l for l in instr("HEALTHCHECK")), "health check")
need(not any(re.search(r"\b(g\+\+|cmake|ninja-build|-dev)\b", l) for l in instr("RUN") + instr("ARG")), "build tools in the runtime stage")
if errors:
    print("FAIL: " + "; ".join(errors))
    sys.exit(1)
print("cuda: stages build-env (nvidia/cuda devel, -DGGML_CUDA=ON) -> build -> runtime (nvidia/cuda runtime, "
      "non-root, health check, SIGTERM, ggserve serve)")
PY

[ "${GGSERVE_DOCKER_CUDA_STANDIN:-0}" = 1 ] || exit 0

# 3. Stand-ins: Debian bookworm with this machine's CUDA toolkit (devel) or its runtime libraries only.
CUDA=$(readlink -f /usr/local/cuda)
[ -x "$CUDA/bin/nvcc" ] || { echo "FAIL: no CUDA toolkit at /usr/local/cuda"; exit 1; }
ctx=$(mktemp -d /tmp/ggserve-cuda-standin.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/cuda/lib64"
cp -a "$CUDA/bin" "$CUDA/nvvm" "$CUDA/include" "$ctx/cuda/"
cp -aL "$CUDA"/lib64/libcudart.so* "$CUDA"/lib64/libcublas.so* "$CUDA"/lib64/libcublasLt.so* \
       "$CUDA"/lib64/libcudart_static.a "$CUDA"/lib64/libcudadevrt.a "$CUDA"/lib64/libculibos.a "$ctx/cuda/lib64/" 2>/dev/null || true
cat >"$ctx/Dockerfile.devel" <<'DF'
FROM debian:bookworm-slim
COPY cuda /usr/local/cuda
RUN echo /usr/local/cuda/lib64 >/etc/ld.so.conf.d/cuda.conf && ldconfig
ENV PATH=/usr/local/cuda/bin:${PATH}
DF
cat >"$ctx/Dockerfile.runtime" <<'DF'
FROM debian:bookworm-slim
COPY cuda/lib64 /usr/local/cuda/lib64
RUN rm -f /usr/local/cuda/lib64/*.a && echo /usr/local/cuda/lib64 >/etc/ld.so.conf.d/cuda.conf && ldconfig
DF
DOCKER_BUILDKIT=1 docker build -q -f "$ctx/Dockerfile.devel" -t ggserve-cuda-standin:devel "$ctx" >/dev/null
DOCKER_BUILDKIT=1 docker build -q -f "$ctx/Dockerfile.runtime" -t ggserve-cuda-standin:runtime "$ctx" >/dev/null
t=$SECONDS
DOCKER_BUILDKIT=1 docker build --progress=plain -f "$F" -t ggserve:cuda-standin \
    --build-arg CUDA_DEVEL_IMAGE=ggserve-cuda-standin:devel --build-arg CUDA_RUNTIME_IMAGE=ggserve-cuda-standin:runtime \
    --build-arg "BUILD_PACKAGES=g++ cmake ninja-build libboost1.81-dev nlohmann-json3-dev libspdlog-dev" \
    --build-arg CUDA_ARCHITECTURES=90 . >"$ctx/build.log" 2>&1 || { tail -30 "$ctx/build.log"; echo "FAIL: stand-in build"; exit 1; }
echo "cuda: all stages built on the stand-ins in $((SECONDS - t)) s"
docker run --rm --entrypoint /bin/sh ggserve:cuda-standin -c 'ldd /usr/local/bin/ggserve' | grep -E "cuda|cublas|spdlog|fmt|not found"
if docker run --rm --entrypoint /bin/sh ggserve:cuda-standin -c 'ldd /usr/local/bin/ggserve' | grep -q "not found"; then
    echo "FAIL: unresolved libraries in the runtime stage"; exit 1
fi
# Without a GPU the image serves on the CPU; -ngl says why it cannot offload (exit 2).
models=$(realpath "${GGSERVE_SHARED_DIR:-../shared}/models")
cid=$(docker run -d -v "$models:/models:ro" -e LLAMA_ARG_MODEL=/models/stories260K.gguf ggserve:cuda-standin \
      -m /models/stories260K.gguf --host 0.0.0.0 --port 8080)
for _ in $(seq 1 100); do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$cid")" = healthy ] && break
    sleep 0.2
done
state=$(docker inspect -f '{{.State.Health.Status}}' "$cid")
docker exec "$cid" curl -fsS http://127.0.0.1:8080/completion -d '{"prompt":"Once upon a time","n_predict":8}' | head -c 200; echo
docker stop -t 10 "$cid" >/dev/null
code=$(docker inspect -f '{{.State.ExitCode}}' "$cid")
docker rm "$cid" >/dev/null
[ "$state" = healthy ] && [ "$code" = 0 ] || { echo "FAIL: stand-in runtime: health $state, exit $code"; exit 1; }
set +e
docker run --rm -v "$models:/models:ro" ggserve:cuda-standin -m /models/stories260K.gguf -ngl 99 --port 8080 >"$ctx/ngl.log" 2>&1
code=$?
set -e
tail -2 "$ctx/ngl.log"
[ "$code" = 2 ] || { echo "FAIL: -ngl without a GPU exited $code, not 2"; exit 1; }
echo "cuda: the stand-in runtime image serves on the CPU without a GPU (healthy, SIGTERM exit 0); -ngl 99 exits 2 with the reason"
