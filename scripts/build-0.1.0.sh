#!/usr/bin/env bash
# Builds release 0.1.0 of the module (commit 69ffabc, the last one with times
# in µs, RDB encoding version 0 and RL.APPLY payload tags G/T) into a
# project-local folder, for the rolling-upgrade test (tests/rolling_upgrade.rs:
# an 0.1.0 master feeding a replica running this build). The source comes from
# this repository's own history (`git archive`), so nothing is downloaded but
# the crates its Cargo.lock pins.
#
#   scripts/build-0.1.0.sh [DEST]   (default: .deps/redis-rl-0.1.0)
#
# Prints the path of the built .so on stdout. Idempotent: an existing build
# is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
COMMIT=69ffabcc45f983287a6914e07f2014229a211b7c
dest=${1:-.deps/redis-rl-0.1.0}
so=$dest/target/release/libredis_rl.so
say() { echo "build-0.1.0: $*" >&2; }

if [[ -f $so ]]; then
    realpath "$so"
    exit 0
fi
if ! git cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
    say "commit $COMMIT (release 0.1.0) is not in this clone (a shallow clone?): git fetch --unshallow"
    exit 1
fi
rm -rf "$dest/src.tmp"
mkdir -p "$dest/src.tmp"
git archive "$COMMIT" | tar -x -C "$dest/src.tmp"
rm -rf "$dest/src"
mv "$dest/src.tmp" "$dest/src"
say "building release 0.1.0 ($COMMIT) in $dest"
"${CARGO:-cargo}" build --release --lib --locked -q --manifest-path "$dest/src/Cargo.toml" --target-dir "$dest/target" >&2
realpath "$so"
