#!/usr/bin/env bash
# Runs the suite of the Python client library, clients/python (pytest),
# against ONE redis-server with the module: the tests start their own
# servers on free loopback ports (and a server without the module, and a
# 3-master cluster) and kill them at the end.
#
# Installs the pinned test dependencies (clients/python/requirements-test.txt:
# redis-py, pytest, starlette, httpx, prometheus-client) once into
# clients/python/.deps (pip --target; gitignored). A stamp of the pinned file
# says whether that install is current; delete the folder to force a fresh one.
# The packaging test makes a fresh venv in a temp dir and pip-installs
# ./clients/python (redis-py from PyPI); SKIP_PACKAGING=1 skips it.
#
# Environment:
#   REDIS_RL_MODULE  the module (default: target/release/libredis_rl.so)
#   REDIS_SERVER     the server binary (default: redis-server)
#   PYTHON           the interpreter (default: python3)
# Extra arguments go to pytest (e.g. -k lease). Exits non-zero on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REDIS_RL_MODULE="$(realpath -m "${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}")"
export REDIS_SERVER="${REDIS_SERVER:-redis-server}"
PYTHON="${PYTHON:-python3}"
DIR="$ROOT/clients/python"
DEPS="$DIR/.deps"

if [ ! -f "$REDIS_RL_MODULE" ]; then
    echo "test-python-client: module not found: $REDIS_RL_MODULE (cargo build --release, or set REDIS_RL_MODULE)" >&2
    exit 1
fi
if ! command -v "$REDIS_SERVER" >/dev/null 2>&1; then
    echo "test-python-client: $REDIS_SERVER not found (set REDIS_SERVER)" >&2
    exit 1
fi
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-python-client: $PYTHON not found" >&2; exit 1; }

want="$("$PYTHON" --version 2>&1) $(sha256sum "$DIR/requirements-test.txt" | cut -d' ' -f1)"
if [ -f "$DEPS/.stamp" ] && [ "$(cat "$DEPS/.stamp")" = "$want" ]; then
    echo "python client dependencies: up to date in clients/python/.deps"
else
    echo "python client dependencies: installing $(tr '\n' ' ' <"$DIR/requirements-test.txt")into clients/python/.deps"
    rm -rf "$DEPS"
    PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input \
        --target "$DEPS" -r "$DIR/requirements-test.txt"
    echo "$want" >"$DEPS/.stamp"
fi

echo "server: $("$REDIS_SERVER" --version | head -1)"
cd "$DIR"
PYTHONPATH="$DEPS:$DIR/src" PYTHONDONTWRITEBYTECODE=1 exec "$PYTHON" -m pytest -p no:cacheprovider -q \
    -W ignore::DeprecationWarning tests "$@"
