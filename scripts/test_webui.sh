#!/usr/bin/env bash
# Browser tests of the chat UI: Debian's chromium driven by puppeteer-core (tests/webui, pinned in its
# package-lock.json; nothing downloads a browser) against build/bin/ggserve with stories260K.
# Screenshots go to build/webui-test/. Needs scripts/setup.sh and scripts/build.sh first.
# Usage: scripts/test_webui.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MODEL=../shared/models/stories260K.gguf
for need in "$BUILD/bin/ggserve" "$MODEL" /usr/bin/chromium tests/webui/node_modules/puppeteer-core; do
    if [ ! -e "$need" ]; then
        echo "test_webui: $need is missing (run scripts/setup.sh and scripts/build.sh)" >&2
        exit 2
    fi
done
# Bounded: a hung browser or server cannot hold the test run.
exec timeout -k 10 300 node tests/webui/webui.test.mjs "$BUILD/bin/ggserve" "$MODEL" "$BUILD/webui-test"
