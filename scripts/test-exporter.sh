#!/usr/bin/env bash
# Tests of scripts/rl-exporter (exporter/), its live page and Grafana
# dashboard, and examples/rl-top, against one real server with the module
# (each test starts its own servers on free loopback ports and kills them).
#
#   REDIS_SERVER      the server binary (default: redis-server on PATH)
#   REDIS_RL_MODULE   the module (default: target/release/libredis_rl.so)
#   RL_EXPORTER_FULL  1: also the slow end-to-end part, once is enough (not per
#                     server): a 3-master cluster under generated traffic, a real
#                     Prometheus scraping the exporter (PromQL checks, every query
#                     of the Grafana dashboard), headless Chromium on the live page
#   RL_EXPORTER_SCREENSHOT  with FULL: where to save the live page's screenshot
#                     (e.g. docs/img/live-page.png; default: a temp file)
#   PYTHON            the interpreter (default: python3)
#
# Installs on demand: redis-py into examples/python/.deps (for rl-top, via
# scripts/test-examples.sh --python-deps-only), and with apt-get, if missing,
# promtool + prometheus (Debian's `prometheus`), redis-cli (`redis-tools`),
# and with FULL chromium. The exporter itself needs only Python's stdlib.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REDIS_RL_MODULE="$(realpath -m "${REDIS_RL_MODULE:-$ROOT/target/release/libredis_rl.so}")"
export REDIS_SERVER="${REDIS_SERVER:-redis-server}"
export PYTHON="${PYTHON:-python3}"
FULL="${RL_EXPORTER_FULL:-0}"

fail() { echo "test-exporter: $*" >&2; exit 1; }
[ -f "$REDIS_RL_MODULE" ] || fail "module not found: $REDIS_RL_MODULE (make build, or set REDIS_RL_MODULE)"
command -v "$REDIS_SERVER" >/dev/null 2>&1 || fail "$REDIS_SERVER not found (set REDIS_SERVER)"

apt_updated=0
need() {  # need COMMAND DEBIAN_PACKAGE
    command -v "$1" >/dev/null 2>&1 && return 0
    command -v apt-get >/dev/null 2>&1 || fail "$1 not found and no apt-get: install $2"
    echo "test-exporter: $1 missing: apt-get install $2"
    if [ "$apt_updated" = 0 ]; then
        timeout 300 apt-get update -qq >/dev/null || fail "apt-get update failed"
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "$2" >/dev/null ||
        fail "apt-get install $2 failed"
    command -v "$1" >/dev/null 2>&1 || fail "$1 still not found after installing $2"
}
need promtool prometheus
need prometheus prometheus
need redis-cli redis-tools
need openssl openssl
if [ "$FULL" = 1 ]; then need chromium chromium; fi

"$ROOT/scripts/test-examples.sh" --python-deps-only

start=$SECONDS
export PYTHONPATH="$ROOT/examples/python/.deps${PYTHONPATH:+:$PYTHONPATH}"
set +e
# The whole output on stdout, a copy for the summary below. (Not `tee
# /dev/stderr`: when stderr is a file, tee opens it anew, truncating it.)
"$PYTHON" -m unittest discover -s "$ROOT/exporter/tests" -t "$ROOT/exporter/tests" -v 2>&1 |
    tee "${TMPDIR:-/tmp}/test-exporter.$$"
status=${PIPESTATUS[0]}
set -e
summary="$(grep -E '^(OK|FAILED)' "${TMPDIR:-/tmp}/test-exporter.$$" || echo "no summary")"
ran="$(grep -oE '^Ran [0-9]+ tests?' "${TMPDIR:-/tmp}/test-exporter.$$" || true)"
rm -f "${TMPDIR:-/tmp}/test-exporter.$$"
version="$("$REDIS_SERVER" --version | grep -oE 'v=[0-9.]+' || true)"
echo
echo "test-exporter: $ran, $summary ($((SECONDS - start)) s; $(basename "$REDIS_SERVER") ${version#v=}; full=$FULL)"
exit "$status"
