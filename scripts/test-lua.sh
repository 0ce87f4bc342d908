#!/usr/bin/env bash
# Tests of the Lua library (lua/redis_rl.lua), the redis-rl limiters for
# servers that refuse MODULE LOAD, against one server:
#
#   - the differential test: the same random operation sequences against the
#     module (RL.* on m:... keys) and the library (FCALL on l:... keys) on one
#     server with the fake clock, every reply and PTTL compared exactly
#     (RL_DIFF_OPS operations on each side, default 100000; RL_DIFF_SEED to
#     replay a run);
#   - directed tests with the module (exactness at extreme rates, id
#     uniqueness, WRONGTYPE between module and library keys, PTTL == reset);
#   - a managed service stood in for: a server without the module, started
#     with --enable-module-command no and a user whose ACL forbids MODULE:
#     FUNCTION LOAD, every function, the EVALSHA form, FCALL_RO rl_peek on a
#     read-only replica, and a replica and an AOF replay holding the same
#     state.
#
# Needs python3 (3.8+; no packages: the tests speak RESP themselves), a C
# compiler for the fake-clock shim, redis-server 7.0+ / valkey-server 7.2+.
# Environment:
#   REDIS_SERVER     the server binary (default: redis-server)
#   REDIS_RL_MODULE  the module (default: target/release/libredis_rl.so)
#   PYTHON           the interpreter (default: python3)
# Exits non-zero on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REDIS_RL_MODULE="$(realpath -ms "${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}")"
export REDIS_SERVER="${REDIS_SERVER:-redis-server}"
PYTHON="${PYTHON:-python3}"

if ! command -v "$REDIS_SERVER" >/dev/null 2>&1; then
    echo "test-lua: $REDIS_SERVER not found (Debian: apt-get install redis-server; or make deps)" >&2
    exit 1
fi
REDIS_SERVER="$(realpath -s "$(command -v "$REDIS_SERVER")")"
if [ ! -f "$REDIS_RL_MODULE" ]; then
    echo "test-lua: module not found: $REDIS_RL_MODULE (build it: make build)" >&2
    exit 1
fi
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-lua: $PYTHON not found" >&2; exit 1; }

echo "test-lua: $("$REDIS_SERVER" --version | head -1)"
start=$SECONDS
if (cd "$ROOT/lua/tests" && "$PYTHON" -m unittest -v test_library.py); then
    echo "test-lua: passed ($((SECONDS - start)) s)"
else
    echo "test-lua: FAILED ($((SECONDS - start)) s)" >&2
    exit 1
fi
