#!/usr/bin/env bash
# Builds the Debian package dist/redis-rl_<version>_<arch>.deb from the
# stripped release module (dpkg-deb only; no debhelper, no root needed):
#
#   /usr/lib/redis/modules/libredis_rl.so          the module (0755: Redis 7
#                                                  refuses a module file
#                                                  without execute permission)
#   /usr/bin/rl-exporter                           the Prometheus exporter
#   /usr/share/redis-rl/exporter/                  (stdlib Python 3)
#   /usr/share/man/man1/rl-exporter.1.gz           from its --help
#   /usr/share/doc/redis-rl/README.Debian          how to load the module
#   /usr/share/doc/redis-rl/examples/redis-rl.conf the loadmodule line
#   /usr/share/doc/redis-rl/copyright              BSD-3-Clause, and the
#                                                  Rust crates linked in
#   /usr/share/doc/redis-rl/changelog.gz           (Debian format) and
#   /usr/share/doc/redis-rl/CHANGELOG.md.gz        the upstream one
#
# The package changes no configuration: Debian's redis.conf has no include
# directory, and an `include` of a file with the loadmodule line is copied
# into redis.conf by CONFIG REWRITE (the server then loads the module twice
# and aborts at its next start), so README.Debian tells the user to add the
# loadmodule line to /etc/redis/redis.conf itself; postinst prints that one
# line, postrm warns if redis.conf still loads the removed module.
#
# Depends: libc6 and libgcc-s1 at the highest symbol versions the module
# uses (objdump -T; cross-checked with dpkg-shlibdeps when it is installed),
# python3 for the exporter.
#
#   scripts/deb.sh            (make deb; scripts/dist.sh runs it last)
# Environment:
#   REDIS_RL_MODULE  the module (default: dist/redis-rl-<version>-linux-<machine>.so
#                    from make dist); one with debug info is stripped here
#   DEB_OUT          output folder (default: dist); an existing SHA256SUMS
#                    there gets the package's line
#   DEB_MAINTAINER   "Name <email>" (default: git config user.name/user.email)
#   SOURCE_DATE_EPOCH  timestamps in the package (default: the commit's time),
#                    so the same inputs give the same bytes
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "deb: $*" >&2; exit 1; }
for tool in dpkg-deb dpkg objdump objcopy strip gzip python3 sha256sum; do
    command -v "$tool" >/dev/null || die "$tool not found (Debian: apt-get install dpkg binutils gzip python3 coreutils)"
done

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "no version in Cargo.toml ('$version')"
arch=$(dpkg --print-architecture)
module=${REDIS_RL_MODULE:-dist/redis-rl-$version-linux-$(uname -m).so}
[[ -f $module ]] || die "$module not found (make dist, or REDIS_RL_MODULE=path/to/libredis_rl.so)"
out=${DEB_OUT:-dist}
maintainer=${DEB_MAINTAINER:-"$(git config user.name 2>/dev/null || true) <$(git config user.email 2>/dev/null || true)>"}
[[ $maintainer =~ ^[^\<]*[^\ \<][^\<]*\ \<[^@\>]+@[^\>]+\>$ ]] || die "Maintainer '$maintainer' is not 'Name <email>' (set DEB_MAINTAINER)"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export TZ=UTC LC_ALL=C

stage=$(mktemp -d "${TMPDIR:-/tmp}/redis-rl-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
doc=$root/usr/share/doc/redis-rl
install -d -m 0755 "$root/DEBIAN" "$root/usr/lib/redis/modules" "$root/usr/bin" \
    "$root/usr/share/redis-rl/exporter" "$root/usr/share/man/man1" "$doc/examples"

# The module: as make dist built it (stripped, byte for byte the file in
# SHA256SUMS), or stripped here the way dist.sh strips it.
so=$root/usr/lib/redis/modules/libredis_rl.so
if objdump -h "$module" | grep -q '\.debug_info'; then
    strip --strip-debug --strip-unneeded -o "$so" "$module"
else
    cp "$module" "$so"
fi
chmod 0755 "$so"
# The debug info, for the list of crates linked in: the module itself, or
# the .debug file make dist keeps next to it.
debuginfo=
for f in "$module" "$module.debug"; do
    if [[ -f $f ]] && objdump -h "$f" | grep -q '\.debug_info'; then debuginfo=$f; break; fi
done

# Depends from the dynamic symbols: libc6 (>= highest GLIBC_x.y) and, when
# the module needs libgcc_s.so.1, libgcc-s1 (>= highest GCC_x.y).
needed=$(objdump -p "$so" | awk '$1 == "NEEDED" {print $2}')
maxver() { objdump -T "$so" | grep -o "$1_[0-9][0-9.]*" | sed "s/^$1_//" | sort -uV | tail -n1; }
depends=()
for lib in $needed; do
    case $lib in
        libc.so.6 | ld-linux*.so.* | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1) ;;
        libgcc_s.so.1)
            v=$(maxver GCC)
            v=$(echo "$v" | cut -d. -f1-2)
            depends+=("libgcc-s1${v:+ (>= $v)}")
            ;;
        *) die "the module needs $lib, which deb.sh has no package name for (add it)" ;;
    esac
done
glibc=$(maxver GLIBC)
[[ -n $glibc ]] || die "no GLIBC symbol versions in $so"
depends=("libc6 (>= $glibc)" "${depends[@]}")
shlibs=$(IFS=,; echo "${depends[*]}")
shlibs=${shlibs//,/, }
if command -v dpkg-shlibdeps >/dev/null; then
    # dpkg-shlibdeps wants a debian/control; a minimal one in the stage.
    mkdir -p "$stage/src/debian"
    printf 'Source: redis-rl\n\nPackage: redis-rl\nArchitecture: any\n' >"$stage/src/debian/control"
    theirs=$(cd "$stage/src" && dpkg-shlibdeps -O "$so" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
    [[ $theirs == "$shlibs" ]] || die "Depends from objdump ($shlibs) differ from dpkg-shlibdeps ($theirs)"
fi

# The exporter: its Python file and page under /usr/share, a wrapper on PATH.
python_min=$(sed -n 's/.*Python \(3\.[0-9]*\)+.*/\1/p' exporter/rl_exporter.py | head -n1)
install -m 0644 exporter/rl_exporter.py exporter/live.html "$root/usr/share/redis-rl/exporter/"
cat >"$root/usr/bin/rl-exporter" <<'EOF'
#!/bin/sh
# rl-exporter: Prometheus metrics and a live page for the redis-rl module
# (redis-rl's Debian package; the program is /usr/share/redis-rl/exporter/).
exec /usr/bin/python3 /usr/share/redis-rl/exporter/rl_exporter.py "$@"
EOF
chmod 0755 "$root/usr/bin/rl-exporter"
# Its manual page, from its own --help.
{
    echo ".TH RL-EXPORTER 1 \"$(date -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)\" \"redis-rl $version\" \"User Commands\""
    echo ".SH NAME"
    echo "rl-exporter \\- Prometheus metrics and a live page for the redis-rl module"
    echo ".SH SYNOPSIS"
    echo ".B rl-exporter"
    echo "[\\fB\\-\\-redis\\fR \\fIURL\\fR]... [\\fB\\-\\-cluster\\fR] [\\fB\\-\\-listen\\fR \\fIHOST:PORT\\fR] [\\fIOPTION\\fR]..."
    echo ".SH DESCRIPTION"
    echo "Scrapes INFO rl and RL.TOP from one server, a list of servers or every master"
    echo "of a cluster, and serves /metrics (Prometheus text format), a live page at /,"
    echo "/api/live (JSON) and /healthz."
    echo ".SH OPTIONS"
    echo ".nf"
    COLUMNS=80 python3 exporter/rl_exporter.py --help | sed -n '/^options:/,$p' | tail -n +2 |
        sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"
    echo ".fi"
    echo ".SH SEE ALSO"
    echo "/usr/share/doc/redis-rl/README.Debian"
} | gzip -9n >"$root/usr/share/man/man1/rl-exporter.1.gz"

# The configuration line, as an example; README.Debian says where it goes.
cat >"$doc/examples/redis-rl.conf" <<'EOF'
# redis-rl: add this line to /etc/redis/redis.conf (not as an `include`:
# see /usr/share/doc/redis-rl/README.Debian), then restart redis-server.
loadmodule /usr/lib/redis/modules/libredis_rl.so
# Module arguments follow on the same line, for example RL.TOP's capacity
# (0 turns RL.TOP off; default 10) and sampling:
# loadmodule /usr/lib/redis/modules/libredis_rl.so top-capacity 4096 top-sample 8
EOF
cat >"$doc/README.Debian" <<EOF
redis-rl for Debian
===================

The package installs the module at /usr/lib/redis/modules/libredis_rl.so
and changes no configuration. To load it into Debian's redis-server, add
one line to /etc/redis/redis.conf and restart the server:

  echo 'loadmodule /usr/lib/redis/modules/libredis_rl.so' | sudo tee -a /etc/redis/redis.conf
  sudo systemctl restart redis-server
  redis-cli MODULE LIST
  redis-cli INFO rl

Module arguments go after the path on the same line; examples/redis-rl.conf
shows them.

Why a line in redis.conf and not an include file: Debian's redis.conf has no
include directory, and when a loadmodule line comes from an \`include\`d
file, CONFIG REWRITE writes the line into redis.conf as well, so the server
loads the module twice at its next start and aborts. A loadmodule line in
redis.conf itself is kept as one line by CONFIG REWRITE.

Why /usr/lib/redis/modules: redis-server.service maps code only from
/usr/bin/redis-server, /usr/lib and /lib (NoExecPaths=/, ExecPaths=...), so
a module kept elsewhere (/opt, /home) would not load under systemd.

Valkey: add the same line to /etc/valkey/valkey.conf and restart
valkey-server. The package's test (scripts/test-deb.sh in the source)
installs it into Debian 12 with its redis-server 7.0.15 only.

Before removing the package, delete the loadmodule line and restart the
server: redis-server does not start while its configuration loads a module
file that is gone.

  sudo sed -i '\\|^loadmodule /usr/lib/redis/modules/libredis_rl.so|d' /etc/redis/redis.conf
  sudo systemctl restart redis-server
  sudo apt remove redis-rl

rl-exporter (/usr/bin/rl-exporter, Python ${python_min:-3} standard library only)
serves the module's INFO rl and RL.TOP as Prometheus metrics:

  rl-exporter --redis redis://127.0.0.1:6379 --listen 127.0.0.1:9786

See rl-exporter(1) and rl-exporter --help. No service unit is installed.

The module's own documentation: the README and docs/ of the source.
EOF

# copyright: machine-readable, the license from LICENSE, and the Rust crates
# statically linked into the module (from its debug info's source paths).
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: redis-rl"
    echo
    echo "Files: *"
    echo "Copyright: $(sed -n 's/^Copyright (c) //p' LICENSE | head -n1)"
    echo "License: BSD-3-Clause"
    if [[ -n $debuginfo ]]; then
        crates=$(strings -n 8 "$debuginfo" | grep -o 'index\.crates\.io-[0-9a-f]*/[A-Za-z0-9_.+-]*-[0-9][A-Za-z0-9_.+-]*' |
            sed 's|.*/||' | sort -u)
        echo "Comment: The module statically links the Rust standard library (MIT OR"
        echo " Apache-2.0) and these crates from crates.io (versions pinned in the"
        echo " source's Cargo.lock), each under the license(s) named:"
        for c in $crates; do
            lic=$(grep -hm1 '^license *=' "$HOME"/.cargo/registry/src/index.crates.io-*/"$c"/Cargo.toml 2>/dev/null |
                sed 's/^license *= *"\(.*\)"/\1/' || true)
            echo " $c: ${lic:-see https://crates.io/crates/${c%-*}}"
        done
    fi
    echo
    echo "License: BSD-3-Clause"
    # The license text after its title line, as DEP-5 continuation lines.
    awk 'NR > 1 && !/^Copyright/ { if ($0 ~ /^[[:space:]]*$/) { if (started) blank = 1; next }
         started = 1; if (blank) { print " ."; blank = 0 } print " " $0 }' LICENSE
} >"$doc/copyright"
chmod 0644 "$doc/copyright"
grep -q 'Redistribution and use' "$doc/copyright" || die "LICENSE text not in copyright"

# changelog.gz (the package is native: upstream builds it) and the upstream one.
{
    echo "redis-rl ($version) unstable; urgency=medium"
    echo
    echo "  * Release $version, packaged by scripts/deb.sh. The changes since the"
    echo "    previous release are in /usr/share/doc/redis-rl/CHANGELOG.md.gz."
    echo
    echo " -- $maintainer  $(date -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.gz"
gzip -9nc CHANGELOG.md >"$doc/CHANGELOG.md.gz"

# Maintainer scripts: a hint, never an edit of redis.conf.
cat >"$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    conf=/etc/redis/redis.conf
    if [ -r "$conf" ] && grep -Eq '^[[:space:]]*loadmodule[[:space:]]+/usr/lib/redis/modules/libredis_rl\.so' "$conf"; then
        echo "redis-rl: $conf loads the module; restart redis-server to run this version."
    else
        echo "redis-rl: to load the module, add 'loadmodule /usr/lib/redis/modules/libredis_rl.so' to $conf and restart redis-server (/usr/share/doc/redis-rl/README.Debian)."
    fi
fi
exit 0
EOF
cat >"$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
    conf=/etc/redis/redis.conf
    if [ ! -e /usr/lib/redis/modules/libredis_rl.so ] && [ -r "$conf" ] &&
        grep -Eq '^[[:space:]]*loadmodule[[:space:]]+/usr/lib/redis/modules/libredis_rl\.so' "$conf"; then
        echo "redis-rl: warning: $conf still loads /usr/lib/redis/modules/libredis_rl.so; redis-server will not start until that line is removed." >&2
    fi
fi
exit 0
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"

# lintian: the exporter's page is served by it, not documentation; the
# module is executable for the server's check.
install -d -m 0755 "$root/usr/share/lintian/overrides"
cat >"$root/usr/share/lintian/overrides/redis-rl" <<'EOF'
# rl-exporter serves this page at /; it is part of the program.
redis-rl: package-contains-documentation-outside-usr-share-doc [usr/share/redis-rl/exporter/live.html]
# Redis 7 refuses to load a module file without execute permission.
redis-rl: executable-in-usr-lib [usr/lib/redis/modules/libredis_rl.so]
EOF
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"

installed_size=$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: redis-rl
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $shlibs, python3 (>= ${python_min:-3})
Recommends: redis-server | valkey-server
Section: database
Priority: optional
Description: native atomic rate, concurrency and quota limiters for Redis
 redis-rl is a module for Redis (7.0 and later) and Valkey that adds
 limiter commands: rate limits (GCRA, token bucket, sliding window, exact
 sliding log), concurrency limits as expiring leases with a fair wait,
 calendar quotas in IANA time zones, and several limits decided as one
 (RL.ALL), plus CL.THROTTLE for redis-cell users. Each decision is one
 atomic command, replicated as its effect.
 .
 The package installs the module under /usr/lib/redis/modules/ (loading it
 takes one line in redis.conf; see README.Debian) and rl-exporter, which
 serves the module's metrics to Prometheus.
EOF

# Timestamps and modes, then the package.
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
find "$root" -type d -exec chmod 0755 {} +
mkdir -p "$out"
deb=$out/redis-rl_${version}_${arch}.deb
dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >/dev/null
dpkg-deb --info "$deb" >/dev/null
if [[ -f $out/SHA256SUMS ]]; then
    name=$(basename "$deb")
    (cd "$out" && { grep -v "  $name\$" SHA256SUMS || true; sha256sum "$name"; } >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
fi
echo "deb: $deb ($(stat -c %s "$deb") bytes; Depends: $shlibs, python3 (>= ${python_min:-3}))"
