#!/usr/bin/env bash
# Installs the Debian package into a fresh Debian 12 (bookworm) root and
# runs Debian's own redis-server with it, the way README.Debian tells a user:
#
#   1. a bookworm root (debootstrap --variant=minbase) with redis-server and
#      python3 installed from deb.debian.org (and bookworm-updates,
#      bookworm-security; upgraded), built once and cached as a
#      tarball in .deps/ (gitignored): a second run downloads nothing;
#   2. each run unpacks a fresh copy of it and installs the package with
#      `apt-get install ./redis-rl_*.deb`, which must install that one
#      package (its dependencies are in the root already, so nothing is
#      downloaded, and a Depends the root cannot satisfy fails here); adds
#      the loadmodule line to /etc/redis/redis.conf and starts
#      /usr/bin/redis-server /etc/redis/redis.conf inside the root as the
#      redis user, on a free loopback port (never 6379);
#   3. from outside, with redis-cli: MODULE LIST shows rl from
#      /usr/lib/redis/modules/, RL.GCRA k 1 1000 answers allowed then
#      denied, INFO rl reports the version in Cargo.toml; CONFIG REWRITE and
#      a restart keep one loadmodule line and the module loaded;
#   4. rl-exporter (installed on PATH in the root) answers --help and serves
#      /metrics with redis_rl_up 1 and its live page;
#   5. `dpkg -r redis-rl` warns that redis.conf still loads the module and
#      removes every file of the package; the server refuses to start until
#      the line is deleted (with docs/install.md's sed); `dpkg -P` purges
#      the package; lintian (when installed) reports no error or warning.
#
# Needs root (debootstrap, chroot), debootstrap (installed with apt-get if
# missing), redis-cli and python3 on the host. Everything it starts is
# stopped, and the root unmounted and deleted, on every exit path; every
# wait has a deadline.
#
#   scripts/test-deb.sh          (make test-deb)
# Environment:
#   REDIS_RL_DEB     a built package to test (default: build one with
#                    scripts/deb.sh from REDIS_RL_MODULE into a temp folder)
#   REDIS_RL_MODULE  the module for that (default: target/release/libredis_rl.so)
#   DEBIAN_MIRROR    default http://deb.debian.org/debian
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
repo=$PWD

start_time=$SECONDS
checks=0
fail() {
    echo "test-deb: FAILED: $*" >&2
    echo "test-deb: FAILED ($checks checks passed before; $((SECONDS - start_time)) s)"
    exit 1
}
ok() { checks=$((checks + 1)); echo "  ok  $*"; }

[[ $(id -u) == 0 ]] || fail "needs root (debootstrap and chroot)"
for tool in redis-cli python3 tar chroot findmnt; do
    command -v "$tool" >/dev/null || fail "$tool not found"
done
if ! command -v debootstrap >/dev/null; then
    echo "test-deb: installing debootstrap (apt-get)"
    timeout 300 apt-get install -y debootstrap >/dev/null 2>&1 ||
        { timeout 300 apt-get update >/dev/null 2>&1 && timeout 300 apt-get install -y debootstrap >/dev/null 2>&1; } ||
        fail "could not install debootstrap"
fi

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache_dir=$repo/.deps/debian
# The cache's name says what is in it; change v1 when the recipe changes.
cache=$cache_dir/bookworm-minbase-redis-server-python3-v2.tar.gz

work=$(mktemp -d "${TMPDIR:-/tmp}/redis-rl-test-deb.XXXXXX")
root=$work/root
pids=()

# Unmounts whatever is mounted under DIR (deepest first); fails if anything
# stays mounted, so nothing below is ever deleted through a mount.
unmount_under() {
    local dir m
    dir=$(realpath -m "$1")
    for m in $(findmnt -rn -o TARGET | awk -v d="$dir" 'index($0, d "/") == 1' | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    ! findmnt -rn -o TARGET | awk -v d="$dir" 'index($0, d "/") == 1 { found = 1 } END { exit !found }'
}
cleanup() {
    local pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        # bounded: SIGKILL after 5 s
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if unmount_under "$work"; then
        rm -rf "$work"
    else
        echo "test-deb: something is still mounted under $work; not deleting it" >&2
    fi
}
trap cleanup EXIT
trap 'echo "test-deb: interrupted" >&2; exit 130' INT TERM

# run_in DIR CMD...: CMD as root inside DIR, a clean environment, at most
# T seconds (default 120).
run_in() {
    local dir=$1
    shift
    timeout "${T:-120}" chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
        DEBIAN_FRONTEND=noninteractive "$@"
}
in_root() { run_in "$root" "$@"; }

# 1. The cached bookworm root with redis-server and python3, up to date.
if [[ ! -f $cache ]]; then
    echo "test-deb: building the Debian 12 root (debootstrap, then apt-get install redis-server python3): once, into $cache"
    t=$SECONDS
    build=$work/build
    timeout 1200 debootstrap --variant=minbase bookworm "$build" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap bookworm failed"; }
    unmount_under "$build" || fail "debootstrap left mounts under $build"
    cat >"$build/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
EOF
    cp /etc/resolv.conf "$build/etc/resolv.conf" 2>/dev/null || true
    # Nothing started by a package's maintainer scripts inside the root.
    printf '#!/bin/sh\nexit 101\n' >"$build/usr/sbin/policy-rc.d"
    chmod 0755 "$build/usr/sbin/policy-rc.d"
    T=600 run_in "$build" apt-get update >"$work/apt.log" 2>&1 &&
        T=900 run_in "$build" apt-get upgrade -y >>"$work/apt.log" 2>&1 &&
        T=900 run_in "$build" apt-get install -y --no-install-recommends redis-server python3 >>"$work/apt.log" 2>&1 ||
        { tail -n 20 "$work/apt.log" >&2; fail "apt-get install redis-server python3 in the root failed"; }
    run_in "$build" apt-get clean
    unmount_under "$build" || fail "mounts left under $build"
    mkdir -p "$cache_dir"
    tar --numeric-owner -C "$build" -czf "$cache.tmp.$$" . || { rm -f "$cache.tmp.$$"; fail "could not write $cache"; }
    mv "$cache.tmp.$$" "$cache"
    rm -rf "$build"
    echo "test-deb: cached the root ($(du -h "$cache" | cut -f1), $((SECONDS - t)) s)"
fi
mkdir -p "$root"
tar --numeric-owner -C "$root" -xzpf "$cache" || fail "could not unpack $cache"
redis_deb_version=$(in_root dpkg-query -W -f='${Version}' redis-server) || fail "no redis-server in the root"

# 2. The package, installed as a user would.
deb=${REDIS_RL_DEB:-}
if [[ -z $deb ]]; then
    module=${REDIS_RL_MODULE:-$repo/target/release/libredis_rl.so}
    [[ -f $module ]] || fail "module not found: $module (make build, or set REDIS_RL_MODULE or REDIS_RL_DEB)"
    REDIS_RL_MODULE=$module DEB_OUT=$work/deb bash scripts/deb.sh >"$work/deb.log" 2>&1 ||
        { cat "$work/deb.log" >&2; fail "scripts/deb.sh failed"; }
    deb=$(ls "$work"/deb/redis-rl_*.deb)
fi
[[ -f $deb ]] || fail "no package: $deb"
cp "$deb" "$root/tmp/redis-rl.deb"
out=$(in_root apt-get install -y /tmp/redis-rl.deb 2>&1) ||
    { echo "$out" >&2; fail "apt-get install ./redis-rl.deb failed in the root"; }
# Its dependencies are all in the root already: apt installs this one
# package and downloads nothing (a Depends the root does not satisfy would
# pull in more, and fail here).
grep -q '^0 upgraded, 1 newly installed, 0 to remove' <<<"$out" ||
    { echo "$out" >&2; fail "apt-get installed more than the package"; }
ok "installed $(basename "$deb") into Debian 12 (redis-server $redis_deb_version)"
grep -q "redis-rl: to load the module, add 'loadmodule /usr/lib/redis/modules/libredis_rl.so'" <<<"$out" ||
    { echo "$out" >&2; fail "postinst did not print the loadmodule hint"; }
ok "postinst prints the loadmodule line"
mode=$(stat -c '%a %U:%G' "$root/usr/lib/redis/modules/libredis_rl.so" 2>/dev/null)
# 0755: Redis 7.0 refuses to load a module file without execute permission.
[[ $mode == "755 root:root" ]] || fail "module installed as '$mode', expected 755 root:root"
ok "/usr/lib/redis/modules/libredis_rl.so 0755 root:root"

# The configuration README.Debian gives (without sudo: we are root there).
in_root sh -c "echo 'loadmodule /usr/lib/redis/modules/libredis_rl.so' | tee -a /etc/redis/redis.conf" >/dev/null ||
    fail "could not add the loadmodule line"
# What systemd's RuntimeDirectory=redis would make.
install -d -m 2755 "$root/run/redis" && in_root chown redis:redis /run/redis

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
[[ $port != 6379 ]] || port=$(free_port)
log=$root/var/log/redis/redis-server.log
server_pid=
start_server() {
    chroot --userspec=redis:redis "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/var/lib/redis \
        /usr/bin/redis-server /etc/redis/redis.conf --port "$port" --bind 127.0.0.1 \
        --daemonize no --supervised no </dev/null >"$work/server.stdout" 2>&1 &
    server_pid=$!
    pids+=("$server_pid")
    local deadline=$((SECONDS + 20))
    while ((SECONDS < deadline)); do
        kill -0 "$server_pid" 2>/dev/null || break
        if [[ $(timeout 2 redis-cli -p "$port" PING 2>/dev/null) == PONG ]]; then return 0; fi
        sleep 0.1
    done
    tail -n 20 "$log" "$work/server.stdout" >&2 2>/dev/null
    return 1
}
stop_server() {
    timeout 5 redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
}
cli() { timeout 5 redis-cli -p "$port" "$@" 2>&1 | tr -d '\r'; }

# 3. Debian's redis-server with the module, checked from outside.
start_server || fail "redis-server in the root did not start with the module (port $port)"
ok "Debian's redis-server started from /etc/redis/redis.conf on 127.0.0.1:$port"
check_module() {
    local list
    list=$(cli MODULE LIST | tr '\n' ' ')
    [[ $list == *"name rl "* && $list == *"path /usr/lib/redis/modules/libredis_rl.so "* ]] ||
        fail "MODULE LIST: '$list'"
}
check_module
ok "MODULE LIST: rl from /usr/lib/redis/modules/libredis_rl.so"
first=$(cli RL.GCRA deb:k 1 1000 | head -n1)
second=$(cli RL.GCRA deb:k 1 1000 | head -n1)
[[ $first == 1 && $second == 0 ]] || fail "RL.GCRA deb:k 1 1000 answered $first then $second (expected 1 then 0)"
ok "RL.GCRA deb:k 1 1000: allowed, then denied"
got=$(cli INFO rl | sed -n 's/^rl_version://p')
[[ $got == "$version" ]] || fail "INFO rl: rl_version '$got', expected $version"
ok "INFO rl: rl_version:$got"
# README.Debian's reason for a loadmodule line over an include: CONFIG
# REWRITE keeps it as one line and the server starts again.
[[ $(cli CONFIG REWRITE) == OK ]] || fail "CONFIG REWRITE failed"
n=$(grep -c '^loadmodule /usr/lib/redis/modules/libredis_rl.so' "$root/etc/redis/redis.conf")
[[ $n == 1 ]] || fail "after CONFIG REWRITE redis.conf has $n loadmodule lines"
stop_server
start_server || fail "redis-server did not start again after CONFIG REWRITE"
check_module
ok "CONFIG REWRITE, restart: one loadmodule line, module loaded"

# 4. The exporter from the package.
help=$(T=20 in_root rl-exporter --help 2>&1) || { echo "$help" >&2; fail "rl-exporter --help failed in the root"; }
[[ $help == *"usage: rl-exporter"* ]] || fail "rl-exporter --help: '$help'"
ok "rl-exporter --help"
xport=$(free_port)
chroot --userspec=nobody:nogroup "$root" /usr/bin/env -i PATH=/usr/bin:/bin \
    rl-exporter --redis "redis://127.0.0.1:$port" --listen "127.0.0.1:$xport" </dev/null >"$work/exporter.log" 2>&1 &
pids+=($!)
metrics=$(python3 - "$xport" <<'EOF'
import sys, time, urllib.request
base = "http://127.0.0.1:%s" % sys.argv[1]
deadline = time.monotonic() + 20
while True:
    try:
        if urllib.request.urlopen(base + "/healthz", timeout=2).read().strip() == b"ok":
            break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("rl-exporter did not answer /healthz within 20 s")
    time.sleep(0.1)
page = urllib.request.urlopen(base + "/", timeout=5).read().decode()
if "<html" not in page.lower():
    sys.exit("the live page is not HTML: %r" % page[:200])
sys.stdout.write(urllib.request.urlopen(base + "/metrics", timeout=10).read().decode())
EOF
) || { cat "$work/exporter.log" >&2; fail "rl-exporter from the package did not serve"; }
grep -Eq '^redis_rl_up(\{[^}]*\})? 1$' <<<"$metrics" || { head -n 20 <<<"$metrics" >&2; fail "/metrics has no redis_rl_up 1"; }
ok "rl-exporter serves /metrics (redis_rl_up 1) and its live page"
stop_server

# 5. Removal.
out=$(T=60 in_root dpkg -r redis-rl 2>&1) || { echo "$out" >&2; fail "dpkg -r redis-rl failed"; }
grep -q "redis-rl: warning: /etc/redis/redis.conf still loads" <<<"$out" ||
    { echo "$out" >&2; fail "postrm did not warn about the loadmodule line left in redis.conf"; }
ok "dpkg -r redis-rl warns that redis.conf still loads the module"
left=()
for f in /usr/lib/redis/modules/libredis_rl.so /usr/bin/rl-exporter /usr/share/redis-rl /usr/share/doc/redis-rl \
    /usr/share/man/man1/rl-exporter.1.gz /usr/share/lintian/overrides/redis-rl; do
    [[ -e $root$f ]] && left+=("$f")
done
((${#left[@]} == 0)) || fail "left after dpkg -r: ${left[*]}"
ok "dpkg -r removes every file of the package"
# What README.Debian warns about, and the line docs/install.md gives to
# delete before a removal.
if start_server 2>/dev/null; then fail "redis-server started with a loadmodule line for a removed module"; fi
stop_server
in_root sed -i '\|^loadmodule /usr/lib/redis/modules/libredis_rl.so|d' /etc/redis/redis.conf ||
    fail "the sed of docs/install.md failed"
start_server || fail "redis-server did not start without the loadmodule line"
[[ $(cli MODULE LIST) == "" ]] || fail "MODULE LIST after the removal: '$(cli MODULE LIST)'"
stop_server
ok "the server refuses a gone module; without the line it starts, no module"
# Left as config-files (its postrm is kept until a purge); a purge ends it.
out=$(T=60 in_root dpkg -P redis-rl 2>&1) || { echo "$out" >&2; fail "dpkg -P redis-rl failed"; }
status=$(in_root dpkg-query -W -f='${db:Status-Status}' redis-rl 2>/dev/null || echo not-installed)
[[ $status == not-installed ]] || fail "dpkg says redis-rl is '$status' after dpkg -P"
ok "dpkg -P redis-rl: not installed"

if command -v lintian >/dev/null; then
    tags=$(timeout 120 lintian --fail-on error,warning "$deb" 2>&1)
    rc=$?
    tags=$(grep -v 'running with root privileges' <<<"$tags")
    ((rc == 0)) || { echo "$tags" >&2; fail "lintian reports errors or warnings"; }
    ok "lintian: no errors or warnings"
else
    echo "  --  lintian not installed; not run"
fi

echo "test-deb: $checks checks passed: $(basename "$deb") on Debian 12 with redis-server $redis_deb_version ($((SECONDS - start_time)) s)"
