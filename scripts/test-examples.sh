#!/usr/bin/env bash
# Runs the test suites of the example services, examples/python and
# examples/node, against a real redis-server with the module (each suite
# starts its own on a free loopback port and kills it at the end).
#
# First it installs what the examples need from the package registries into
# folders inside the examples (ignored by examples/.gitignore), once:
#   examples/python/.deps          redis-py, pinned in requirements.txt (pip --target); the
#                                  redis-rl library comes from clients/python/src (PYTHONPATH)
#   examples/node/node_modules     ioredis, from the committed package-lock.json (npm ci),
#                                  and redis-rl, a link to clients/node
# A stamp of the pinned files says whether an install is current; delete the
# folder to force a fresh one.
#
# Needs: python3 with pip, Node.js 18+ with npm, redis-server 7.0+, and the
# built module. Environment:
#   REDIS_RL_MODULE  the module (default: target/release/libredis_rl.so)
#   REDIS_SERVER     the server binary (default: redis-server)
#   PYTHON           the Python interpreter (default: python3)
# Exits non-zero if anything is missing or any suite fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REDIS_RL_MODULE="${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}"
export REDIS_SERVER="${REDIS_SERVER:-redis-server}"
PYTHON="${PYTHON:-python3}"
PY_DIR="$ROOT/examples/python"
NODE_DIR="$ROOT/examples/node"

header() { printf '\n======== %s ========\n' "$*"; }
fail() { echo "test-examples: $*" >&2; return 1; }
stamp() { cat "$@" | sha256sum | cut -d" " -f1; }  # of the contents, not the paths

# What every example needs.
if [ ! -f "$REDIS_RL_MODULE" ]; then
    echo "test-examples: module not found: $REDIS_RL_MODULE (build it: cargo build --release, or make build)" >&2
    exit 1
fi
if ! command -v "$REDIS_SERVER" >/dev/null 2>&1; then
    echo "test-examples: $REDIS_SERVER not found (Debian: apt-get install redis-server; or make deps)" >&2
    exit 1
fi

python_deps() {
    command -v "$PYTHON" >/dev/null 2>&1 ||
        fail "$PYTHON not found: install Python 3.10 or later (Debian: apt-get install python3 python3-pip)" || return
    local want
    want="$("$PYTHON" --version 2>&1) $(stamp "$PY_DIR/requirements.txt")"
    if [ -f "$PY_DIR/.deps/.stamp" ] && [ "$(cat "$PY_DIR/.deps/.stamp")" = "$want" ]; then
        echo "python dependencies: up to date in examples/python/.deps"
        return 0
    fi
    "$PYTHON" -m pip --version >/dev/null 2>&1 ||
        fail "pip not found for $PYTHON (Debian: apt-get install python3-pip)" || return
    echo "python dependencies: installing $(tr '\n' ' ' <"$PY_DIR/requirements.txt")into examples/python/.deps"
    rm -rf "$PY_DIR/.deps"
    # --target installs into the project folder only: no venv module needed,
    # and Debian's "externally managed" system Python is left alone.
    PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input \
        --target "$PY_DIR/.deps" -r "$PY_DIR/requirements.txt" || fail "pip install failed" || return
    echo "$want" >"$PY_DIR/.deps/.stamp"
}

node_deps() {
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        fail "examples/node needs Node.js 18 or later and npm, which are not installed." \
            "Install them (Debian 12/13: apt-get install nodejs npm; or from nodejs.org) and run again." || return
    fi
    local major want
    major="$(node -p 'process.versions.node.split(".")[0]')"
    [ "$major" -ge 18 ] || fail "examples/node needs Node.js 18 or later, found $(node --version)" || return
    # The lock file may only fetch from the public npm registry; the one
    # exception is the client library, linked from this repository (file:).
    if grep -E '"resolved": *"' "$NODE_DIR/package-lock.json" |
        grep -vE '"resolved": *"(https://registry\.npmjs\.org/|\.\./\.\./clients/node")'; then
        fail "examples/node/package-lock.json resolves the packages above outside registry.npmjs.org" || return
    fi
    want="$(stamp "$NODE_DIR/package.json" "$NODE_DIR/package-lock.json")"
    if [ -f "$NODE_DIR/node_modules/.stamp" ] && [ "$(cat "$NODE_DIR/node_modules/.stamp")" = "$want" ]; then
        echo "node dependencies: up to date in examples/node/node_modules"
        return 0
    fi
    echo "node dependencies: npm ci in examples/node (exactly package-lock.json; no install scripts)"
    (cd "$NODE_DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || fail "npm ci failed" || return
    echo "$want" >"$NODE_DIR/node_modules/.stamp"
}

# --python-deps-only: install redis-py (for the integration suite's test of
# examples/rl-top) and stop.
if [ "${1:-}" = "--python-deps-only" ]; then
    python_deps
    exit
fi

failed=()
results=()

header "examples/python: redis-py + http.server (python unittest)"
start=$SECONDS
if python_deps &&
    (cd "$PY_DIR" && PYTHONPATH="$PY_DIR/.deps:$ROOT/clients/python/src:$PY_DIR" "$PYTHON" -m unittest discover -s tests -t . -v); then
    results+=("python passed ($((SECONDS - start)) s)")
else
    failed+=(python)
    results+=("python FAILED")
fi

# The same suite on a managed service stood in for: no module, --enable-module-command no;
# the service's redis-rl Limiter (backend "auto") uses the Lua library (lua/redis_rl.lua).
header "examples/python on the Lua library: a server without the module (python unittest)"
start=$SECONDS
if python_deps &&
    (cd "$PY_DIR" && EXAMPLES_RL_BACKEND=lua PYTHONPATH="$PY_DIR/.deps:$ROOT/clients/python/src:$PY_DIR" \
        "$PYTHON" -m unittest discover -s tests -t . -v); then
    results+=("python on the Lua library passed ($((SECONDS - start)) s)")
else
    failed+=(python-lua)
    results+=("python on the Lua library FAILED")
fi

header "examples/node: redis-rl + ioredis + node:http (node --test)"
start=$SECONDS
if node_deps && (cd "$NODE_DIR" && node --test test/*.test.js); then
    results+=("node passed ($((SECONDS - start)) s)")
else
    failed+=(node)
    results+=("node FAILED")
fi

echo
echo "test-examples: $(IFS=,; echo "${results[*]}" | sed 's/,/, /g')"
[ ${#failed[@]} -eq 0 ]
