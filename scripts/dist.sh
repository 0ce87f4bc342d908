#!/usr/bin/env bash
# Builds what a release ships into dist/ (gitignored), from the release
# build (target/release/libredis_rl.so, which keeps debug info for the
# profiler):
#
#   dist/redis-rl-<version>-linux-<arch>.so        stripped, with a
#                                                  .gnu_debuglink to:
#   dist/redis-rl-<version>-linux-<arch>.so.debug  its debug info
#   dist/redis-rl_<version>_<arch>.deb             the Debian package
#                                                  (scripts/deb.sh)
#   dist/SHA256SUMS                                all three, for sha256sum -c
#
# Then it checks what it built: the checksums verify, the stripped module
# has no debug sections, and a server started with it (on a free loopback
# port, with a start-up deadline) answers RL.GCRA and reports the version.
#
#   scripts/dist.sh           (make dist)
# Environment: REDIS_SERVER (default redis-server), MODULE (default
# target/release/libredis_rl.so).
set -euo pipefail
cd "$(dirname "$0")/.."

module=${MODULE:-target/release/libredis_rl.so}
server=${REDIS_SERVER:-redis-server}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
arch=$(uname -m)
name=redis-rl-$version-linux-$arch.so
for tool in objcopy strip sha256sum; do
    command -v "$tool" >/dev/null || { echo "dist: $tool not found (Debian: apt-get install binutils coreutils)" >&2; exit 1; }
done
[[ -f $module ]] || { echo "dist: $module not built (make build)" >&2; exit 1; }

rm -rf dist && mkdir -p dist
objcopy --only-keep-debug "$module" "dist/$name.debug"
strip --strip-debug --strip-unneeded -o "dist/$name" "$module"
(cd dist && objcopy --add-gnu-debuglink="$name.debug" "$name")
(cd dist && sha256sum "$name" "$name.debug" >SHA256SUMS)

# Checks.
(cd dist && sha256sum --quiet -c SHA256SUMS)
if objdump -h "dist/$name" | grep -q '\.debug_info'; then
    echo "dist: dist/$name still has debug info" >&2
    exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/redis-rl-dist.XXXXXX")
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --logfile "$dir/server.log" --loadmodule "$PWD/dist/$name" </dev/null >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
    redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break
    sleep 0.05
done
reply=$(redis-cli -p "$port" RL.GCRA dist:k 10 1000 | tr '\n' ' ')
[[ $reply == "1 10 9 0 100 " ]] || { echo "dist: RL.GCRA answered '$reply'" >&2; tail -n 20 "$dir/server.log" >&2; exit 1; }
got=$(redis-cli -p "$port" INFO rl | tr -d '\r' | sed -n 's/^rl_version://p')
[[ $got == "$version" ]] || { echo "dist: rl_version '$got', expected $version" >&2; exit 1; }

size() { stat -c %s "$1"; }
echo "dist: dist/$name ($(size "dist/$name") bytes; the build $(size "$module")), its .debug, SHA256SUMS; a server loads it and answers (rl_version $got)"

# The Debian package of that module (scripts/deb.sh adds it to SHA256SUMS;
# scripts/test-deb.sh installs it into a Debian 12 root).
if command -v dpkg-deb >/dev/null; then
    REDIS_RL_MODULE=dist/$name DEB_OUT=dist scripts/deb.sh
    (cd dist && sha256sum --quiet -c SHA256SUMS)
else
    echo "dist: dpkg-deb not found: no Debian package built (Debian: apt-get install dpkg)"
fi
