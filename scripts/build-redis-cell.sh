#!/usr/bin/env bash
# Builds redis-cell (the module CL.THROTTLE comes from) for the comparison
# rows of `make profile`: scripts/build-redis-cell.sh [SOURCE], SOURCE a git
# URL or a local clone (default: GitHub). Checks out the pinned commit into
# .deps/redis-cell (gitignored), builds it with cargo and prints the path of
# the module; then: CELL_SO=<that path> make profile.
set -euo pipefail
cd "$(dirname "$0")/.."
SOURCE=${1:-https://github.com/brandur/redis-cell}
# redis-cell 0.5.0 (2025), the latest release's tree.
COMMIT=4d4233870d3caa7cf51ee90b0ee778d12969e99a
DIR=.deps/redis-cell
if ! git -C "$DIR" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
    rm -rf "$DIR"
    git clone --quiet "$SOURCE" "$DIR" || {
        echo "build-redis-cell: could not clone $SOURCE (no network? pass a local clone)" >&2
        exit 1
    }
fi
git -C "$DIR" -c advice.detachedHead=false checkout --quiet "$COMMIT"
(cd "$DIR" && cargo build --release --lib --quiet)
echo "$PWD/$DIR/target/release/libredis_cell.so"
