#!/usr/bin/env bash
# The docker deployment, tested for real on this machine (docs/deploy.md): the CPU image, compose.yaml
# with one server, compose.scale.yaml with 3 replicas behind HAProxy, and a parse of Dockerfile.cuda.
# Run as root after scripts/setup.sh and scripts/build.sh; scripts/test.sh calls it with a time bound.
#  - Docker is Debian's (docker.io, docker-compose 1.29); dockerd is started when it is not running and
#    stopped again at the end. Debian's client is put first in PATH (its BuildKit is built in).
#  - The base image debian:bookworm-slim is made by docker/base-image.sh (debootstrap) when missing.
#  - The image under test is the Dockerfile's `prebuilt` target (build/bin/ggserve, built by
#    scripts/build.sh with the same compiler and libraries) unless GGSERVE_DOCKER_FROM_SOURCE=1, which
#    builds the standard `runtime` target, compiling in the image (about 15 minutes on 2 cores). The
#    `build-env` stage (toolchain, cmake configure) is built either way.
#  - `--prepare` only starts dockerd, makes the base image and builds the stages that need no source tree
#    (toolchain, runtime-base, HAProxy), then stops: scripts/test.sh runs it beside the host build, so
#    that the image builds of the real run (the next call) find those layers cached.
#  - Everything stays on this machine: ports are published on 127.0.0.1 only (GGSERVE_DOCKER_PORT_BASE,
#    default 18800, and the next two), and the compose networks are the test's own.
set -euo pipefail
cd "$(dirname "$0")/.."
PREPARE=0
case "${1:-}" in
    --prepare) PREPARE=1 ;;
    "") ;;
    *) echo "usage: scripts/test_docker.sh [--prepare]" >&2; exit 2 ;;
esac
export PATH=/usr/bin:/usr/sbin:$PATH
SHARED=$(realpath "${GGSERVE_SHARED_DIR:-../shared}")
MODELS=$SHARED/models
BASE_PORT=${GGSERVE_DOCKER_PORT_BASE:-18800}
LB_PORT=$((BASE_PORT + 1))
STATS_PORT=$((BASE_PORT + 2))
P1=ggsingle$$
P2=ggscale$$
IMAGE=ggserve:test
LB_IMAGE=ggserve-haproxy:test
API_KEY=sk-test-0123456789
WORK=$(mktemp -d /tmp/ggserve-docker-test.XXXXXX)
t0=$SECONDS

step() { echo "== docker: $* [$((SECONDS - t0)) s] =="; }
fail() { echo "FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

for tool in dockerd docker docker-compose debootstrap python3 node curl; do
    command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
done
[ -f "$MODELS/stories260K.gguf" ] || fail "no $MODELS/stories260K.gguf"
[ "$(id -u)" -eq 0 ] || fail "run as root (dockerd, debootstrap)"

# --- dockerd -----------------------------------------------------------------------------------------
DOCKERD_PID=""
remove_project() {  # containers and networks of a compose project, whatever state they are in
    docker ps -aq --filter "label=com.docker.compose.project=$1" | xargs -r docker rm -f >/dev/null 2>&1 || true
    docker network ls -q --filter "label=com.docker.compose.project=$1" | xargs -r docker network rm >/dev/null 2>&1 || true
}
TOOLS_PID=""
cleanup() {
    local rc=$?
    if [ -n "$TOOLS_PID" ]; then kill "$TOOLS_PID" 2>/dev/null || true; wait "$TOOLS_PID" 2>/dev/null || true; fi
    if docker info >/dev/null 2>&1; then
        for p in "$P1" "$P2"; do remove_project "$p"; done
    fi
    if [ -n "$DOCKERD_PID" ]; then
        kill "$DOCKERD_PID" 2>/dev/null || true
        wait "$DOCKERD_PID" 2>/dev/null || true
    fi
    if [ $rc -ne 0 ]; then
        echo "docker test failed; logs in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # a time bound (timeout) still cleans up

if ! docker info >/dev/null 2>&1; then
    step "starting dockerd"
    dockerd >"$WORK/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    for _ in $(seq 1 120); do
        docker info >/dev/null 2>&1 && break
        kill -0 "$DOCKERD_PID" 2>/dev/null || { tail -20 "$WORK/dockerd.log" >&2; fail "dockerd exited"; }
        sleep 0.25
    done
    docker info >/dev/null 2>&1 || fail "dockerd did not answer within 30 s"
fi
echo "dockerd: $(docker info -f 'server {{.ServerVersion}}, storage {{.Driver}}, cgroup v{{.CgroupVersion}}')"

# --- images ------------------------------------------------------------------------------------------
step "base image"
docker/base-image.sh debian:bookworm-slim

export DOCKER_BUILDKIT=1
build() {  # build LOGNAME ARGS...: quiet unless it fails
    local name=$1; shift
    local t=$SECONDS
    docker build --progress=plain "$@" >"$WORK/build-$name.log" 2>&1 || { tail -40 "$WORK/build-$name.log" >&2; fail "docker build $name"; }
    echo "built $name in $((SECONDS - t)) s"
}
if [ "$PREPARE" = 1 ]; then
    step "prepare: the stages without the source tree"
    build toolchain -f docker/Dockerfile --target toolchain -t ggserve-toolchain:test docker
    build runtime-base -f docker/Dockerfile --target runtime-base -t ggserve-runtime-base:test docker
    build haproxy -t "$LB_IMAGE" docker/haproxy
    step "prepared"
    exit 0
fi
step "images"
build build-env -f docker/Dockerfile --target build-env -t ggserve-build-env:test .
if [ "${GGSERVE_DOCKER_FROM_SOURCE:-0}" = 1 ]; then
    build runtime -f docker/Dockerfile -t "$IMAGE" .
else
    [ -x build/bin/ggserve ] || fail "build/bin/ggserve is missing: run scripts/build.sh first"
    build prebuilt -f docker/Dockerfile --target prebuilt -t "$IMAGE" .
fi
build haproxy -t "$LB_IMAGE" docker/haproxy
size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
echo "image $IMAGE: $((size / 1000000)) MB (base debian:bookworm-slim $(($(docker image inspect -f '{{.Size}}' debian:bookworm-slim) / 1000000)) MB)"

step "image: non-root, runtime only, health check, stop signal, entry point"
[ "$(docker image inspect -f '{{.Config.User}}' "$IMAGE")" = ggserve ] || fail "the image does not run as ggserve"
[ "$(docker image inspect -f '{{.Config.StopSignal}}' "$IMAGE")" = SIGTERM ] || fail "no STOPSIGNAL SIGTERM"
[[ "$(docker image inspect -f '{{json .Config.Healthcheck.Test}}' "$IMAGE")" == *'/health'* ]] || fail "no HEALTHCHECK on /health"
[ "$(docker image inspect -f '{{json .Config.Entrypoint}}' "$IMAGE")" = '["/usr/local/bin/ggserve","serve"]' ] || fail "entry point"
docker run --rm --entrypoint /bin/sh "$IMAGE" -c '
    [ "$(id -u)" != 0 ] || { echo "runs as root"; exit 1; }
    for t in gcc g++ cc c++ cmake ninja make ld as; do
        if command -v $t >/dev/null; then echo "build tool $t in the runtime image"; exit 1; fi
    done
    for d in /usr/include/boost /usr/include/spdlog /usr/include/nlohmann; do
        if [ -e $d ]; then echo "headers $d in the runtime image"; exit 1; fi
    done
    if ldd /usr/local/bin/ggserve | grep "not found"; then exit 1; fi' || fail "runtime image contents"

# The image is configured by llama-server's LLAMA_ARG_* variables: a model named only there is the one
# ggserve tries to load.
probe=$(docker run --rm -e LLAMA_ARG_MODEL=/models/env-probe.gguf "$IMAGE" 2>&1 || true)
grep -q "env-probe" <<<"$probe" || { echo "$probe" >&2; fail "the image ignores LLAMA_ARG_MODEL"; }

# Settings for both stacks (compose files turn them into LLAMA_ARG_*; docs/deploy.md lists them).
export GGSERVE_IMAGE=$IMAGE GGSERVE_LB_IMAGE=$LB_IMAGE GGSERVE_MODELS=$MODELS GGSERVE_MODEL=stories260K.gguf \
       GGSERVE_CTX_SIZE=2048 GGSERVE_PARALLEL=2 GGSERVE_THREADS=1 GGSERVE_CPUS=1 GGSERVE_MEMORY=1g \
       GGSERVE_ALIAS=stories-env
config_file() {  # other settings as a JSON config file, for compose.config.yaml
    python3 - "$@" <<'EOF'
import json, os, sys
cfg = {"host": "0.0.0.0", "port": 8080, "model": "/models/" + os.environ["GGSERVE_MODEL"],
       "ctx-size": 1024, "parallel": 1, "threads": 1, "metrics": True, "alias": "stories-file"}
for kv in sys.argv[1:]:
    k, v = kv.split("=", 1)
    cfg[k] = v
print(json.dumps(cfg, indent=1))
EOF
}

# --- compose.yaml: one server ------------------------------------------------------------------------
step "compose.yaml: one server with stories260K.gguf"
C1=(-f docker/compose.yaml)
dc1() { GGSERVE_PORT=$BASE_PORT GGSERVE_CONFIG=$WORK/single.json LLAMA_API_KEY=$API_KEY docker-compose -p "$P1" "${C1[@]}" "$@"; }
python3 tests/docker/stack_checks.py health "http://127.0.0.1:$BASE_PORT" 60 >"$WORK/ready1" &
poller=$!
t_up=$(now)
dc1 up -d >"$WORK/up1.log" 2>&1 || { cat "$WORK/up1.log" >&2; fail "compose up"; }
cid=$(dc1 ps -q ggserve)
wait "$poller" || { docker logs "$cid" >&2; fail "no /health 200 within 60 s"; }
t_ready=$(cat "$WORK/ready1")
t_started=$(date -d "$(docker inspect -f '{{.State.StartedAt}}' "$cid")" +%s.%N)
t_logready=$(date -d "$(docker logs -t "$cid" 2>&1 | awk '/ready:/ {print $1; exit}')" +%s.%N)
for _ in $(seq 1 200); do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$cid")" = healthy ] && break
    sleep 0.1
done
t_healthy=$(now)
[ "$(docker inspect -f '{{.State.Health.Status}}' "$cid")" = healthy ] || fail "container not healthy"
echo "cold start: ggserve logged ready $(elapsed "$t_started" "$t_logready") s and answered /health 200 from the host" \
     "$(elapsed "$t_started" "$t_ready") s after the container started" \
     "($(elapsed "$t_up" "$t_ready") s after compose up began); docker's health status healthy after" \
     "$(elapsed "$t_started" "$t_healthy") s (its first check runs at the 5 s interval)"

# What compose set up: loopback-only port, limits, read-only root, restart policy, read-only model.
[ "$(docker port "$cid" 8080)" = "127.0.0.1:$BASE_PORT" ] || fail "port is published as $(docker port "$cid" 8080)"
got=$(docker inspect -f '{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.RestartPolicy.Name}}' "$cid")
[ "$got" = "1000000000 1073741824 true unless-stopped" ] || fail "limits/restart: $got"
docker exec "$cid" sh -c 'touch /models/x 2>/dev/null' && fail "the model volume is writable"

step "the LLAMA_ARG_* settings took effect"
GGSERVE_API_KEY=$API_KEY python3 tests/docker/stack_checks.py settings "http://127.0.0.1:$BASE_PORT" \
    "$GGSERVE_ALIAS" "$GGSERVE_CTX_SIZE" "$GGSERVE_PARALLEL"

step "streamed chat and the OpenAI SDK client test against 127.0.0.1:$BASE_PORT"
GGSERVE_API_KEY=$API_KEY python3 tests/docker/stack_checks.py stream "http://127.0.0.1:$BASE_PORT"
(cd tests/node && GGSERVE_URL="http://127.0.0.1:$BASE_PORT" GGSERVE_MODEL_ID="$GGSERVE_ALIAS" node openai_client.test.mjs - - "$SHARED/golden/stories260K.greedy.json")

step "SIGTERM stop"
t=$(now)
dc1 stop -t 10 >"$WORK/stop1.log" 2>&1
took=$(elapsed "$t" "$(now)")
code=$(docker inspect -f '{{.State.ExitCode}}' "$cid")
[[ "$(docker logs "$cid" 2>&1)" == *"shutting down"* ]] || fail "no orderly shutdown in the log"
[ "$code" = 0 ] || fail "exit code $code after SIGTERM (137 = killed after the grace period)"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 10 else 1)" "$took" || fail "stop took $took s"
echo "stopped by SIGTERM in $took s (compose included), exit code 0"
dc1 down >/dev/null 2>&1
[ -z "$(docker ps -aq --filter "label=com.docker.compose.project=$P1")" ] || fail "containers left after down"
[ -z "$(docker network ls -q --filter "label=com.docker.compose.project=$P1")" ] || fail "networks left after down"

step "compose.config.yaml: the same server configured by a JSON file instead"
config_file "api-key=$API_KEY" >"$WORK/single.json"
C1+=(-f docker/compose.config.yaml)
dc1 up -d >"$WORK/up1c.log" 2>&1 || { cat "$WORK/up1c.log" >&2; fail "compose up (config file)"; }
python3 tests/docker/stack_checks.py health "http://127.0.0.1:$BASE_PORT" 60 >/dev/null ||
    { docker logs "$(dc1 ps -q ggserve)" >&2; fail "no /health 200 within 60 s (config file)"; }
GGSERVE_API_KEY=$API_KEY python3 tests/docker/stack_checks.py settings "http://127.0.0.1:$BASE_PORT" stories-file 1024 1
dc1 down >/dev/null 2>&1

# --- compose.scale.yaml: 3 replicas behind HAProxy ---------------------------------------------------
step "compose.scale.yaml: 3 replicas behind HAProxy"
C2=(-f docker/compose.scale.yaml)
dc2() { GGSERVE_PORT=$LB_PORT GGSERVE_LB_STATS_PORT=$STATS_PORT docker-compose -p "$P2" "${C2[@]}" "$@"; }
dc2 up -d --scale ggserve=3 >"$WORK/up2.log" 2>&1 || { cat "$WORK/up2.log" >&2; fail "compose up (scale)"; }
python3 tests/docker/stack_checks.py wait-up "http://127.0.0.1:$STATS_PORT" 3 60
for p in $(docker ps --filter "label=com.docker.compose.project=$P2" --format '{{.Ports}}' | grep -o '[0-9.]*:[0-9]*->' ); do
    case $p in 127.0.0.1:*) ;; *) fail "a port is published on $p";; esac
done

step "affinity, spread, streaming through HAProxy"
python3 tests/docker/stack_checks.py affinity "http://127.0.0.1:$LB_PORT" "http://127.0.0.1:$STATS_PORT"
python3 tests/docker/stack_checks.py lbstream "http://127.0.0.1:$LB_PORT"

step "failover: a replica killed under load"
python3 tests/docker/stack_checks.py failover "http://127.0.0.1:$LB_PORT" "http://127.0.0.1:$STATS_PORT" "$P2"

step "restart policy: a replica that crashes comes back"
victim=$(docker ps -q --filter "label=com.docker.compose.project=$P2" --filter "label=com.docker.compose.service=ggserve" | head -1)
kill -9 "$(docker inspect -f '{{.State.Pid}}' "$victim")"
for _ in $(seq 1 300); do
    [ "$(docker inspect -f '{{.RestartCount}} {{.State.Health.Status}}' "$victim")" = "1 healthy" ] && break
    sleep 0.1
done
[ "$(docker inspect -f '{{.RestartCount}} {{.State.Health.Status}}' "$victim")" = "1 healthy" ] || fail "the crashed replica did not come back healthy"
echo "a replica killed by SIGKILL from outside docker was restarted and is healthy again"

step "stop the scale-out stack"
t=$(now)
dc2 down -t 10 >"$WORK/down2.log" 2>&1
echo "stack down in $(elapsed "$t" "$(now)") s"
[ -z "$(docker ps -aq --filter "label=com.docker.compose.project=$P2")" ] || fail "containers left after down"
[ -z "$(docker network ls -q --filter "label=com.docker.compose.project=$P2")" ] || fail "networks left after down"

# --- --tools-runtime ---------------------------------------------------------------------------------
# The server on this host, its built-in tools in a container it starts from the base image: files are
# written and commands run in there, and the container is gone once the server stops.
step "--tools-runtime docker:IMAGE: the tools run in a container the server starts and removes"
TOOLS_PORT=$((BASE_PORT + 3))
BOX_FILE=/tmp/ggserve-in-the-box-$$.txt
build/bin/ggserve serve -m "$MODELS/stories260K.gguf" --host 127.0.0.1 --port "$TOOLS_PORT" -c 256 \
    --tools all --tools-runtime docker:debian:bookworm-slim >"$WORK/tools.log" 2>&1 &
TOOLS_PID=$!
for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$TOOLS_PORT/health" >/dev/null 2>&1 && break
    kill -0 "$TOOLS_PID" 2>/dev/null || { cat "$WORK/tools.log" >&2; fail "the server with --tools-runtime exited"; }
    sleep 0.1
done
curl -sf "http://127.0.0.1:$TOOLS_PORT/health" >/dev/null || { cat "$WORK/tools.log" >&2; fail "the server with --tools-runtime is not up"; }
box=$(docker ps -q --no-trunc --filter ancestor=debian:bookworm-slim)
[ "$(echo "$box" | grep -c .)" = 1 ] || fail "expected one container of debian:bookworm-slim, got: $box"
tool() { curl -sf "http://127.0.0.1:$TOOLS_PORT/tools" -H 'Content-Type: application/json' -d "$1"; }
tool "{\"tool\": \"write_file\", \"params\": {\"path\": \"$BOX_FILE\", \"content\": \"written by a tool\\n\"}}" >/dev/null \
    || fail "write_file in the container"
[ "$(docker exec "$box" cat "$BOX_FILE")" = "written by a tool" ] || fail "the file is not in the container"
[ ! -e "$BOX_FILE" ] || fail "the file was written on the host"
out=$(tool '{"tool": "exec_shell_command", "params": {"command": "hostname; cat /etc/debian_version"}}')
echo "$out" | grep -q "${box:0:12}" || fail "exec_shell_command did not run in the container: $out"
out=$(tool "{\"tool\": \"read_file\", \"params\": {\"path\": \"$BOX_FILE\"}}")
echo "$out" | grep -q 'written by a tool' || fail "read_file in the container: $out"
tool '{"tool": "exec_shell_command", "params": {"command": "mkdir -p /srv/many && cd /srv/many && for i in $(seq 1 200); do echo \"file $i\" > f$i.txt; done"}}' >/dev/null
t=$(now)
out=$(tool '{"tool": "grep_search", "params": {"path": "/srv/many", "pattern": "file 1[0-9]$"}}')
echo "$out" | grep -q 'Total matches: 10' || fail "grep_search in the container: $out"
echo "grep_search over 200 files in the container: $(elapsed "$t" "$(now)") s"
kill -TERM "$TOOLS_PID"
wait "$TOOLS_PID" || fail "the server did not stop cleanly"
TOOLS_PID=""
for _ in $(seq 1 100); do
    [ -z "$(docker ps -aq --no-trunc --filter id="$box")" ] && break
    sleep 0.1
done
[ -z "$(docker ps -aq --no-trunc --filter id="$box")" ] || fail "the tools container was left behind after the server stopped"
echo "files and commands ran in container ${box:0:12}; it was removed when the server stopped"

# --- Dockerfile.cuda ---------------------------------------------------------------------------------
step "Dockerfile.cuda: parse and stages"
tests/docker/check_cuda_dockerfile.sh

step "all docker checks passed"
