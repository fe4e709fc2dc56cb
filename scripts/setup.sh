#!/usr/bin/env bash
# Installs every build and test dependency from Debian packages (and the pinned npm packages of the
# web UI and of the client and browser tests). Idempotent: packages already present are not touched. Run as root on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake ninja-build pkg-config git curl ca-certificates
      libboost1.81-dev nlohmann-json3-dev libspdlog-dev catch2
      python3 python3-numpy python3-jsonschema)
# HTTPS (--ssl-key-file): OpenSSL for the build, the openssl tool for the test that makes a certificate.
PKGS+=(libssl-dev openssl)
# The web UI's browser tests (scripts/test_webui.sh) drive Debian's chromium.
PKGS+=(chromium)
# libFuzzer, ASan and UBSan for the fuzz targets (scripts/fuzz.sh).
PKGS+=(clang)
# Docker tests (scripts/test_docker.sh): Debian's engine and compose v1; debootstrap makes the base image.
PKGS+=(docker.io docker-compose debootstrap)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from another repository on some machines; only install Debian's when absent.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Pinned npm packages (package-lock.json): the web UI's build tools (web/, needed by the build), the
# OpenAI and Anthropic client tests and the browser tests (puppeteer-core; it downloads no browser).
# Installed when missing, and again when the lock file is newer than the installed tree (npm records that
# tree in node_modules/.package-lock.json), so a pulled dependency change is picked up.
for dir in web tests/node tests/webui; do
    if [ -f "$dir/package-lock.json" ] && { [ ! -d "$dir/node_modules" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; }; then
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
done
echo "setup: ok"
