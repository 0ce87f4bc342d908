#!/usr/bin/env bash
# Regenerates the time zone rules embedded in lua/redis_rl.lua (between its
# "GENERATED ZONES BEGIN/END" lines) from the module's own tzdata: the
# lua/tzgen crate uses the same jiff version and features as the module and
# prints every UTC offset transition of the zones in lua/tzgen/zones.txt
# from 1970 to 2201. Run it after editing zones.txt or upgrading jiff (and
# keep lua/tzgen/Cargo.toml's jiff pins equal to the module's).
#
#   scripts/gen-lua-tz.sh            # rewrites lua/redis_rl.lua
#   scripts/gen-lua-tz.sh --check    # exits 1 if it is not up to date
#
# Environment: CARGO (default cargo), CARGO_TARGET_DIR (default
# target-tzgen, gitignored).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target-tzgen}"
cargo=${CARGO:-cargo}
(cd "$ROOT/lua/tzgen" && "$cargo" build --release --locked --quiet)
gen="$(mktemp)"
new="$(mktemp)"
trap 'rm -f "$gen" "$new"' EXIT
"$CARGO_TARGET_DIR/release/redis-rl-tzgen" "$ROOT/lua/tzgen/zones.txt" >"$gen"
lib="$ROOT/lua/redis_rl.lua"
python3 - "$lib" "$gen" >"$new" <<'PY'
import sys
src = open(sys.argv[1]).read()
gen = open(sys.argv[2]).read()
begin = src.index("  -- GENERATED ZONES BEGIN")
end = src.index("  -- GENERATED ZONES END")
end = src.index("\n", end) + 1
sys.stdout.write(src[:begin] + gen + src[end:])
PY
if [ "${1:-}" = "--check" ]; then
    if ! cmp -s "$new" "$lib"; then
        echo "gen-lua-tz: lua/redis_rl.lua's zone rules are not what lua/tzgen makes: run scripts/gen-lua-tz.sh" >&2
        exit 1
    fi
    echo "gen-lua-tz: lua/redis_rl.lua is up to date"
    exit 0
fi
cp "$new" "$lib"
echo "gen-lua-tz: $(grep -c "^    \['" "$gen" || true) zone names written into lua/redis_rl.lua ($(wc -c <"$gen") bytes of rules)"
