#!/usr/bin/env bash
# Runs every ```redis-cli example of docs/ (and of README.md) against one
# server with the module, on a frozen fake clock, and compares every reply
# exactly (scripts/docs_examples.py; the block format is in
# docs/contributing.md, "Examples are tests").
#
# Environment:
#   REDIS_RL_MODULE  the module (default: target/release/libredis_rl.so)
#   REDIS_SERVER     the server binary (default: redis-server)
#   PYTHON           the Python interpreter (default: python3; stdlib only)
#   CC               the C compiler for the fake-clock shim (default: cc)
# Arguments: optional Markdown files (default: docs/**/*.md and README.md).
# Exits non-zero if anything is missing or any reply differs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REDIS_RL_MODULE="${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}"
REDIS_SERVER="${REDIS_SERVER:-redis-server}"
PYTHON="${PYTHON:-python3}"
CC="${CC:-cc}"

if [ ! -f "$REDIS_RL_MODULE" ]; then
    echo "test-docs: module not found: $REDIS_RL_MODULE (build it: make build)" >&2
    exit 1
fi
if ! command -v "$REDIS_SERVER" >/dev/null 2>&1; then
    echo "test-docs: $REDIS_SERVER not found (Debian: apt-get install redis-server; or make deps)" >&2
    exit 1
fi
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-docs: $PYTHON not found" >&2; exit 1; }
command -v "$CC" >/dev/null 2>&1 || { echo "test-docs: no C compiler ($CC) for the fake-clock shim" >&2; exit 1; }

# The shim, built once per source version into target/ (gitignored).
SHIM_DIR="$ROOT/target/docs-test"
mkdir -p "$SHIM_DIR"
SHIM="$SHIM_DIR/fakeclock-$(sha256sum "$ROOT/tests/common/fakeclock.c" | cut -c1-16).so"
if [ ! -f "$SHIM" ]; then
    "$CC" -shared -fPIC -O2 -o "$SHIM.tmp" "$ROOT/tests/common/fakeclock.c" -ldl
    mv "$SHIM.tmp" "$SHIM"
fi

echo "test-docs: $("$REDIS_SERVER" --version | head -1)"
exec "$PYTHON" "$ROOT/scripts/docs_examples.py" --server "$(command -v "$REDIS_SERVER")" \
    --module "$(realpath "$REDIS_RL_MODULE")" --shim "$SHIM" "$@"
