#!/usr/bin/env bash
# The soak (scripts/soak.py) against one server: mixed traffic over every
# kind with a replica and AOF rewrites, checked at intervals.
#
#   REDIS_SERVER      the server binary (default: redis-server on PATH)
#   REDIS_RL_MODULE   the module (default: target/release/libredis_rl.so)
#   DURATION          seconds of traffic (default 60; make test runs 20)
#   SOAK_JSON         where to write every check's figures (optional)
#
# Installs redis-py on demand (into examples/python/.deps, as the examples do).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module="$(realpath -m "${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}")"
server="${REDIS_SERVER:-redis-server}"
[ -f "$module" ] || { echo "soak: module not found: $module (make build, or set REDIS_RL_MODULE)" >&2; exit 1; }
command -v "$server" >/dev/null 2>&1 || { echo "soak: $server not found (set REDIS_SERVER)" >&2; exit 1; }
"$ROOT/scripts/test-examples.sh" --python-deps-only >/dev/null
duration="${DURATION:-60}"
# A real-time bound: the traffic, plus the checks and restarts.
PYTHONPATH="$ROOT/examples/python/.deps${PYTHONPATH:+:$PYTHONPATH}" \
    timeout $((duration * 2 + 300)) python3 "$ROOT/scripts/soak.py" --server "$server" --module "$module" \
    --duration "$duration" ${SOAK_JSON:+--json "$SOAK_JSON"}
