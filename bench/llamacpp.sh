#!/usr/bin/env bash
# llama.cpp for side-by-side comparisons, without building it: Debian sid packages llama.cpp (llama-server,
# llama-bench, llama-quantize, llama-cli; the example programs llama-lookahead, llama-speculative,
# llama-lookup ... in llama.cpp-examples), and its binaries run here with sid's own loader and C library,
# unpacked into a folder outside the checkout (nothing is installed on the system).
#
#   bench/llamacpp.sh fetch [DIR]          downloads and unpacks (apt-get download; ~20 MB) into DIR
#   bench/llamacpp.sh TOOL [ARGS...]       runs llama-server, llama-bench, llama-quantize, ... from DIR
#
# DIR: $LLAMACPP_DIR, default ../llamacpp-debian beside the checkout. The CPU backend variant is chosen
# from /proc/cpuinfo (AMX: sapphirerapids; AVX-512 with BF16: zen4; AVX-512: skylakex; AVX2: haswell);
# GGML_BACKEND_PATH overrides it. This is a development tool: no build or test runs it.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/.." && pwd)
DIR=${LLAMACPP_DIR:-$root_dir/../llamacpp-debian}

fetch() {
    local dir=$1 apt=$1/apt
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$dir/debs" "$dir/root"
    echo "deb http://deb.debian.org/debian sid main" > "$apt/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
                -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Dir::State::status=/dev/null"
                -o "APT::Sandbox::User=root")
    apt-get "${opts[@]}" update >/dev/null
    (cd "$dir/debs" && apt-get "${opts[@]}" download llama.cpp-tools llama.cpp-examples libllama0 libggml0 libc6 libstdc++6 libgcc-s1 \
        libgomp1 libssl3t64 zlib1g)
    for f in "$dir"/debs/*.deb; do dpkg-deb -x "$f" "$dir/root"; done
    echo "llama.cpp $(apt-cache "${opts[@]}" show llama.cpp-tools | sed -n 's/^Version: //p' | head -1) in $dir"
}

run() {
    local tool=$1
    shift
    local lib=$DIR/root/usr/lib/x86_64-linux-gnu
    [ -x "$DIR/root/usr/bin/$tool" ] || { echo "no $tool in $DIR: run bench/llamacpp.sh fetch first" >&2; exit 2; }
    local variant=x64 flags
    flags=$(grep -m1 '^flags' /proc/cpuinfo)
    if [[ $flags == *amx_tile* ]]; then variant=sapphirerapids
    elif [[ $flags == *avx512_bf16* ]]; then variant=zen4
    elif [[ $flags == *avx512f* ]]; then variant=skylakex
    elif [[ $flags == *avx2* ]]; then variant=haswell
    fi
    # The packaged binaries look for their backends in a fixed system folder: name the one to load.
    GGML_BACKEND_PATH=${GGML_BACKEND_PATH:-$lib/ggml/backends0/libggml-cpu-$variant.so} \
        exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib:$lib/llama:$lib/ggml/backends0" "$DIR/root/usr/bin/$tool" "$@"
}

case ${1:-} in
    fetch) fetch "${2:-$DIR}" ;;
    "" | -h | --help) sed -n '2,12p' "$0" ;;
    *) run "$@" ;;
esac
