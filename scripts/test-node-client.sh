#!/usr/bin/env bash
# Runs the test suite of the Node.js client library, clients/node (npm package
# redis-rl), against one redis-server with the module. Each test file starts
# its own server(s) on free loopback ports and kills them at the end.
#
# First it installs the dev dependencies (ioredis, redis, express, fastify,
# prom-client, typescript) from the committed package-lock.json into
# clients/node/node_modules (gitignored), once: a stamp of package.json and
# the lock file says whether the install is current.
#
# Environment:
#   REDIS_RL_MODULE  the module (default: target/release/libredis_rl.so)
#   REDIS_SERVER     the server binary (default: redis-server); redis-cli (for
#                    the cluster test) is taken from the same folder, else PATH
# Exits non-zero if anything is missing or any test fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REDIS_RL_MODULE="$(realpath -m "${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}")"
export REDIS_SERVER="${REDIS_SERVER:-redis-server}"
DIR="$ROOT/clients/node"

fail() { echo "test-node-client: $*" >&2; exit 1; }

[ -f "$REDIS_RL_MODULE" ] || fail "module not found: $REDIS_RL_MODULE (cargo build --release, or set REDIS_RL_MODULE)"
command -v "$REDIS_SERVER" >/dev/null 2>&1 || fail "$REDIS_SERVER not found (apt-get install redis-server, or set REDIS_SERVER)"
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || fail "needs Node.js 18 or later and npm"
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 18 ] || fail "needs Node.js 18 or later, found $(node --version)"

# The lock file may only fetch from the public npm registry.
if grep -E '"resolved": *"' "$DIR/package-lock.json" | grep -vE '"resolved": *"https://registry\.npmjs\.org/'; then
    fail "clients/node/package-lock.json resolves the packages above outside registry.npmjs.org"
fi
want="$(cat "$DIR/package.json" "$DIR/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ -f "$DIR/node_modules/.stamp" ] && [ "$(cat "$DIR/node_modules/.stamp")" = "$want" ]; then
    echo "node dependencies: up to date in clients/node/node_modules"
else
    echo "node dependencies: npm ci in clients/node (exactly package-lock.json; no install scripts)"
    (cd "$DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || fail "npm ci failed"
    echo "$want" >"$DIR/node_modules/.stamp"
fi

echo "test-node-client: $("$REDIS_SERVER" --version | head -1)"
cd "$DIR"
# Test files run in parallel (each with its own servers), two at a time: the
# machine's cores are shared.
exec node --test --test-concurrency=2 test/*.test.mjs
