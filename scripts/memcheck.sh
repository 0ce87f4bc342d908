#!/usr/bin/env bash
# Memory errors and leaks: runs redis-server under valgrind memcheck with
# the module and drives every command, every data-type callback (RDB save
# and load with the aux field, AOF rewrite and replay, DUMP/RESTORE and
# corrupt payloads, COPY, MEMORY USAGE, digests, free and lazy free,
# expiry), keyspace events, RL.TOP, INFO rl and blocking RL.ACQUIRE ...
# WAIT (granted, timed out, disconnected, killed): scripts/memcheck.py
# lists the steps. Then it reads valgrind's log and fails on any invalid
# read, write or free, any use of uninitialised memory, and any definite
# leak whose stack involves the module (scripts/memcheck.supp names the one
# deliberate allocation kept for good: the command docs, once per load).
#
# Debian's redis-server allocates with the system jemalloc; valgrind is
# told to replace it too (--soname-synonyms), so RedisModule_Alloc and the
# server's own allocations are checked as well as the module's Rust ones.
#
#   scripts/memcheck.sh
#
# Environment: REDIS_SERVER (default redis-server), REDIS_RL_MODULE (default
# target/release/libredis_rl.so: the release profile keeps line tables, so
# stacks name the module's source lines), MEMCHECK_LOGS (default a
# temporary directory, kept on failure). Needs valgrind (apt-get install
# valgrind) and python3. Prints the run time; exits non-zero on any finding.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE=$(realpath -m "${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}")
SERVER=$(command -v "${REDIS_SERVER:-redis-server}" || true)
if [[ -z $SERVER ]]; then
    echo "memcheck: ${REDIS_SERVER:-redis-server} not found" >&2
    exit 1
fi
if [[ ! -f $MODULE ]]; then
    echo "memcheck: module not built: $MODULE (make build)" >&2
    exit 1
fi
if ! command -v valgrind >/dev/null; then
    echo "memcheck: valgrind not found (Debian: apt-get install valgrind)" >&2
    exit 1
fi
logs=${MEMCHECK_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/redis-rl-memcheck.XXXXXX")}
mkdir -p "$logs"
echo "memcheck: $("$SERVER" --version | head -n1)"
echo "memcheck: $(valgrind --version), module $MODULE, logs in $logs"
start=$SECONDS
if python3 "$ROOT/scripts/memcheck.py" "$SERVER" "$MODULE" "$logs"; then
    echo "memcheck: passed in $((SECONDS - start)) s"
    [[ -n ${MEMCHECK_LOGS:-} ]] || rm -rf "$logs"
else
    echo "memcheck: FAILED in $((SECONDS - start)) s (valgrind logs kept in $logs)" >&2
    exit 1
fi
