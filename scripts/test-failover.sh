#!/usr/bin/env bash
# Fault tests (tests/faults, pytest): failover under Sentinel with replication lag, and
# partitions and pauses during traffic, against ONE redis-server with the module.
#
# Failover: a master with the module, one replica behind a lag proxy (0, 1, 10 ms), three
# Sentinels (down-after 500 ms, failover-timeout 2000 ms); 8 client threads drive one GCRA
# budget and 6 lease holders a lease set through Sentinel discovery and the client library
# (clients/python); the master is killed with SIGKILL; the replica is promoted. It asserts no
# crash, equal state after, over-admission bounded by the writes the replica had not received,
# leases never doubled (the holders' own view), and none over the limit in the strict mode
# (the decision followed by WAIT 1). Partitions and pauses: CLIENT PAUSE WRITE/ALL, DEBUG
# SLEEP, SIGSTOP/SIGCONT of the master and of the replica, the replica cut off and back
# (partial resync); after each: no crash, equal digests, the configured fail-open/closed path.
#
# Installs redis-py and pytest (tests/faults/requirements.txt) once into tests/faults/.deps
# (pip --target; gitignored); a stamp says whether the install is current.
#
# Environment:
#   REDIS_RL_MODULE  the module (default: target/release/libredis_rl.so)
#   REDIS_SERVER     the server binary (default: redis-server)
#   REDIS_SENTINEL   the Sentinel binary (default: /usr/bin/redis-sentinel with Debian's
#                    /usr/bin/redis-server, else "$REDIS_SERVER <conf> --sentinel")
#   FAILOVER_RUNS    failover runs per lag (default 1: the quick test, about a minute);
#                    e.g. 5 for the measurement. The table is printed at the end and, with
#                    FAILOVER_REPORT=FILE, written to FILE as Markdown.
#   PYTHON           the interpreter (default: python3)
# Extra arguments go to pytest (e.g. -k partition). Exits non-zero on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REDIS_RL_MODULE="$(realpath -m "${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}")"
export REDIS_SERVER="${REDIS_SERVER:-redis-server}"
PYTHON="${PYTHON:-python3}"
DIR="$ROOT/tests/faults"
DEPS="$DIR/.deps"

if [ ! -f "$REDIS_RL_MODULE" ]; then
    echo "test-failover: module not found: $REDIS_RL_MODULE (cargo build --release, or set REDIS_RL_MODULE)" >&2
    exit 1
fi
if ! command -v "$REDIS_SERVER" >/dev/null 2>&1; then
    echo "test-failover: $REDIS_SERVER not found (set REDIS_SERVER)" >&2
    exit 1
fi
if [ -n "${REDIS_SENTINEL:-}" ] && ! command -v "$REDIS_SENTINEL" >/dev/null 2>&1; then
    echo "test-failover: $REDIS_SENTINEL not found (Debian: apt-get install redis-sentinel)" >&2
    exit 1
fi
command -v "$PYTHON" >/dev/null 2>&1 || { echo "test-failover: $PYTHON not found" >&2; exit 1; }

want="$("$PYTHON" --version 2>&1) $(sha256sum "$DIR/requirements.txt" | cut -d' ' -f1)"
if [ -f "$DEPS/.stamp" ] && [ "$(cat "$DEPS/.stamp")" = "$want" ]; then
    echo "fault test dependencies: up to date in tests/faults/.deps"
else
    echo "fault test dependencies: installing $(tr '\n' ' ' <"$DIR/requirements.txt")into tests/faults/.deps"
    rm -rf "$DEPS"
    PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input \
        --target "$DEPS" -r "$DIR/requirements.txt"
    echo "$want" >"$DEPS/.stamp"
fi

echo "server: $("$REDIS_SERVER" --version | head -1)"
cd "$DIR"
PYTHONPATH="$DEPS:$DIR:$ROOT/clients/python/src" PYTHONDONTWRITEBYTECODE=1 exec "$PYTHON" -m pytest \
    -p no:cacheprovider -q -W ignore::DeprecationWarning "$@" .
