#!/usr/bin/env bash
# redis-rl end-to-end benchmark: one command, one run, ratios measured side by side.
#
# Builds the release module, starts its own redis-server on a free loopback
# port, and measures with redis-benchmark (-c 50), at -P 1 and -P 16:
#   - INCR and SET k v PX 60000 (the floor for a keyed write with an expiry),
#     on one key and on random keys (-r 100000);
#   - each RL command on one key (allow path and deny path) and on random keys;
#   - Lua equivalents of the three algorithms (scripts/lua/, redis.call('TIME')),
#     the baseline users have today.
# Each measurement is repeated REPS times, alternating the order of the tests,
# and the median is reported. Also prints each command's usec_per_call from
# INFO commandstats and bytes per live key (used_memory over 100,000 keys).
#
# Knobs (environment): REPS (3), N16 (requests at -P 16, 400000), N1 (at -P 1,
# 100000), CLIENTS (50), REDIS_SERVER (redis-server), OUT (markdown file).
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
N16=${N16:-400000}
N1=${N1:-100000}
CLIENTS=${CLIENTS:-50}
SERVER=${REDIS_SERVER:-redis-server}
OUT=${OUT:-target/bench.md}
MODULE="$PWD/target/release/libredis_rl.so"

command -v redis-benchmark >/dev/null || { echo "bench: redis-benchmark missing (make deps)" >&2; exit 1; }
cargo build --release --lib -q

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
"$SERVER" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --loadmodule "$MODULE" --daemonize no --logfile "$dir/server.log" &
server_pid=$!
cleanup() { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

cli() { redis-cli -p "$port" "$@"; }
for _ in $(seq 100); do cli PING >/dev/null 2>&1 && break; sleep 0.05; done
cli PING >/dev/null

sha_gcra=$(cli SCRIPT LOAD "$(cat scripts/lua/gcra.lua)")
sha_tb=$(cli SCRIPT LOAD "$(cat scripts/lua/tokenbucket.lua)")
sha_slide=$(cli SCRIPT LOAD "$(cat scripts/lua/slide.lua)")

# name | stats command (for INFO commandstats) | random keys? | command line
# Allow paths use a rate no benchmark can exhaust; deny paths a key drained
# by its first call (limit 1 per hour).
# Listed so that each RL command runs right next to its baselines (INCR and
# SET PX on the same key pattern, its Lua equivalent): ratios are taken
# within each repetition and then their median reported, so the drift of a
# shared machine between distant measurements does not enter them.
tests=(
  "INCR one|incr|0|INCR bench:incr"
  "SET PX one|set|0|SET bench:set v PX 60000"
  "RL.GCRA one allow|rl.gcra|0|RL.GCRA bench:gcra:allow 4294967295 1000"
  "Lua GCRA one allow|evalsha|0|EVALSHA $sha_gcra 1 bench:lgcra:allow 4294967295 1000 4294967295 1"
  "RL.GCRA one deny|rl.gcra|0|RL.GCRA bench:gcra:deny 1 3600000"
  "RL.TOKENBUCKET one allow|rl.tokenbucket|0|RL.TOKENBUCKET bench:tb:allow 4294967295 4294967295 1000"
  "Lua TOKENBUCKET one allow|evalsha|0|EVALSHA $sha_tb 1 bench:ltb:allow 4294967295 4294967295 1000 1"
  "RL.TOKENBUCKET one deny|rl.tokenbucket|0|RL.TOKENBUCKET bench:tb:deny 1 1 3600000"
  "RL.SLIDE one allow|rl.slide|0|RL.SLIDE bench:slide:allow 4294967295 1000"
  "Lua SLIDE one allow|evalsha|0|EVALSHA $sha_slide 1 bench:lslide:allow 4294967295 1000 1"
  "RL.SLIDE one deny|rl.slide|0|RL.SLIDE bench:slide:deny 1 3600000"
  "INCR random|incr|1|INCR bench:incr:__rand_int__"
  "SET PX random|set|1|SET bench:set:__rand_int__ v PX 60000"
  "RL.GCRA random|rl.gcra|1|RL.GCRA bench:gcra:__rand_int__ 100 60000"
  "Lua GCRA random|evalsha|1|EVALSHA $sha_gcra 1 bench:lgcra:__rand_int__ 100 60000 100 1"
  "RL.TOKENBUCKET random|rl.tokenbucket|1|RL.TOKENBUCKET bench:tb:__rand_int__ 100 100 60000"
  "Lua TOKENBUCKET random|evalsha|1|EVALSHA $sha_tb 1 bench:ltb:__rand_int__ 100 100 60000 1"
  "RL.SLIDE random|rl.slide|1|RL.SLIDE bench:slide:__rand_int__ 100 60000"
  "Lua SLIDE random|evalsha|1|EVALSHA $sha_slide 1 bench:lslide:__rand_int__ 100 60000 1"
  "RL.LOG random, limit 10|rl.log|1|RL.LOG bench:log:__rand_int__ 10 60000"
  "RL.LOG one, limit 1000|rl.log|0|RL.LOG bench:log:one 1000 60000"
)

# run_one PIPELINE "cmd line" RANDOM -> requests per second
run_one() {
  local p=$1 line=$2 rnd=$3 n
  if [ "$p" -eq 1 ]; then n=$N1; else n=$N16; fi
  local extra=()
  [ "$rnd" -eq 1 ] && extra=(-r 100000)
  # shellcheck disable=SC2086
  redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -P "$p" "${extra[@]}" --csv $line 2>/dev/null \
    | awk -F'"' 'NR==2 {print $4}'
}

declare -A results
order=("${!tests[@]}")
for rep in $(seq "$REPS"); do
  # Alternate the order every repetition, so drift and warm-up hit all tests alike.
  if [ $((rep % 2)) -eq 0 ]; then
    mapfile -t order < <(printf '%s\n' "${!tests[@]}" | sort -rn)
  else
    mapfile -t order < <(printf '%s\n' "${!tests[@]}" | sort -n)
  fi
  for i in "${order[@]}"; do
    IFS='|' read -r name _ rnd line <<<"${tests[$i]}"
    for p in 1 16; do
      cli FLUSHALL >/dev/null
      results["$i,$p"]+="$(run_one "$p" "$line" "$rnd") "
    done
  done
  echo "bench: repetition $rep of $REPS done" >&2
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# usec_per_call: one dedicated -P 16 run per test after a stats reset.
declare -A usec
for i in "${!tests[@]}"; do
  IFS='|' read -r name stat rnd line <<<"${tests[$i]}"
  cli FLUSHALL >/dev/null; cli CONFIG RESETSTAT >/dev/null
  run_one 16 "$line" "$rnd" >/dev/null
  usec[$i]=$(cli INFO commandstats | tr -d '\r' | awk -F'[,=:]' -v s="cmdstat_$stat" 'tolower($1)==s {for (k=2;k<=NF;k++) if ($k=="usec_per_call") print $(k+1)}')
done

# Bytes per live key: used_memory delta over 100,000 keys with a TTL.
bytes_per_key() {
  local template=$1
  cli FLUSHALL >/dev/null
  local before after
  before=$(cli INFO memory | tr -d '\r' | awk -F: '$1=="used_memory" {print $2}')
  seq -w 0 99999 | awk -v t="$template" '{i = index(t, "KEY"); print substr(t, 1, i - 1) "mem:" $1 substr(t, i + 3)}' \
    | cli --pipe >/dev/null
  after=$(cli INFO memory | tr -d '\r' | awk -F: '$1=="used_memory" {print $2}')
  echo $(( (after - before) / 100000 ))
}
mem_set=$(bytes_per_key "SET KEY 1800000000000000 PX 3600000")
mem_gcra=$(bytes_per_key "RL.GCRA KEY 100 3600000")
mem_tb=$(bytes_per_key "RL.TOKENBUCKET KEY 100 100 3600000")
mem_slide=$(bytes_per_key "RL.SLIDE KEY 100 3600000")
mem_log=$(bytes_per_key "RL.LOG KEY 100 3600000")
mem_lua=$(bytes_per_key "EVALSHA $sha_gcra 1 KEY 100 3600000 100 1")

find_idx() { for i in "${!tests[@]}"; do if [[ "${tests[$i]}" == "$1|"* ]]; then echo "$i"; fi; done; }
# The median over repetitions of the per-repetition ratio of two tests' rates.
ratio() { # ratio TEST_INDEX BASE_INDEX PIPELINE
  paste <(tr ' ' '\n' <<<"${results[$1,$3]}" | grep -v '^$') <(tr ' ' '\n' <<<"${results[$2,$3]}" | grep -v '^$') \
    | awk '$2 > 0 {print $1 / $2}' | median | awk '{printf "%.2f", $1}'
}

{
  echo "## redis-rl benchmark"
  echo
  echo "\`scripts/bench.sh\` (REPS=$REPS, -c $CLIENTS, -n $N1 at -P 1 and $N16 at -P 16),"
  echo "$("$SERVER" --version | head -1 | cut -d' ' -f1-3), $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)."
  echo "Medians of requests per second; ratios (medians of the per-repetition ratios) against INCR and"
  echo "against SET PX on the same key pattern."
  echo
  echo "| test | rps -P 1 | rps -P 16 | /INCR -P 16 | /SET PX -P 16 | usec_per_call |"
  echo "|---|---:|---:|---:|---:|---:|"
  for i in "${!tests[@]}"; do
    IFS='|' read -r name _ rnd _ <<<"${tests[$i]}"
    r1=$(echo "${results[$i,1]}" | median)
    r16=$(echo "${results[$i,16]}" | median)
    if [ "$rnd" -eq 1 ]; then pattern=random; else pattern=one; fi
    incr=$(find_idx "INCR $pattern")
    setpx=$(find_idx "SET PX $pattern")
    printf '| %s | %.0f | %.0f | %s | %s | %s |\n' "$name" "$r1" "$r16" "$(ratio "$i" "$incr" 16)" "$(ratio "$i" "$setpx" 16)" "${usec[$i]:--}"
  done
  echo
  echo "RL against its Lua equivalent, -P 16, median of the per-repetition ratios (random keys / one key, allow path):"
  echo
  echo "| algorithm | random keys | one key |"
  echo "|---|---:|---:|"
  for alg in GCRA TOKENBUCKET SLIDE; do
    rr=$(ratio "$(find_idx "RL.$alg random")" "$(find_idx "Lua $alg random")" 16)
    ro=$(ratio "$(find_idx "RL.$alg one allow")" "$(find_idx "Lua $alg one allow")" 16)
    echo "| $alg | ${rr}x | ${ro}x |"
  done
  echo
  echo "Bytes per live key (used_memory delta over 100,000 keys with a TTL, 12-byte key names):"
  echo
  echo "| key | bytes |"
  echo "|---|---:|"
  echo "| SET k <int64> PX | $mem_set |"
  echo "| RL.GCRA | $mem_gcra |"
  echo "| RL.TOKENBUCKET | $mem_tb |"
  echo "| RL.SLIDE | $mem_slide |"
  echo "| RL.LOG (one entry) | $mem_log |"
  echo "| Lua GCRA (string state) | $mem_lua |"
} | tee "$OUT"
echo "bench: table written to $OUT" >&2
