#!/usr/bin/env bash
# Installs dependencies, builds, and starts the server. Without -m it serves the shared stories260K
# model when it is present. Extra arguments go to `ggserve serve` (e.g. --port 9000 -np 4).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh

args=("$@")
has_model=0
for a in "${args[@]}"; do
    case "$a" in -m|--model|--model=*) has_model=1 ;; esac
done
if [ "$has_model" -eq 0 ]; then
    default=../shared/models/stories260K.gguf
    if [ ! -f "$default" ]; then
        echo "serve.sh: no model: pass -m /path/to/model.gguf" >&2
        exit 2
    fi
    args=(-m "$default" "${args[@]}")
fi
exec build/bin/ggserve serve "${args[@]}"
