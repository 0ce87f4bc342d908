#!/usr/bin/env bash
# redis-rl end-to-end benchmark: one command, one run, ratios measured side by side.
#
# Builds the release module, starts its own redis-server on a free loopback
# port, and measures with redis-benchmark (-c 50), at -P 1 and -P 16:
#   - INCR and SET k v PX 60000 (the floor for a keyed write with an expiry),
#     on one key and on random keys (-r 100000);
#   - each RL command on one key (allow path and deny path) and on random keys;
#   - Lua equivalents of the three algorithms (scripts/lua/, redis.call('TIME')),
#     the baseline users have today;
#   - concurrency leases: RL.ACQUIRE with generated ids on random keys, and
#     RL.ACQUIRE renewing one of 100 named leases on one key (ID __rand_int__,
#     -r 100), beside SET PX on the same key pattern; and RL.ACQUIRE +
#     RL.RELEASE pairs on a key holding 100 leases (below).
# Each measurement is repeated REPS times, alternating the order of the tests,
# and the median is reported. Also prints each command's usec_per_call from
# INFO commandstats and bytes per live key (used_memory over 100,000 keys).
#
# The pairs. redis-benchmark sends one command line, and a release needs the
# id of its acquire. So the pairs are a pre-generated RESP file (ids named by
# the client: RL.ACQUIRE bench:pool 1000 600000 ID p-<i>, then RL.RELEASE
# bench:pool p-<i>; 100 leases held-<i> acquired first, uncounted), sent by
# `redis-cli --pipe` and timed from its start to its last reply. Its baseline
# is a file of as many `SET bench:set v PX 60000` sent and timed the same way
# in the same repetition: same client (C, reading a file, so no Python or
# generation in the timing), one connection, same pipelining, same count of
# commands, so the two differ only in what the server does per command and in
# the bytes each command takes (the pairs' are longer, as RL commands' are in
# the other rows). The server is what limits both: in a check on this 2-core
# machine its CPU time (INFO cpu) was 92-97% of the wall time of either file,
# redis-cli's under half. The ratio is taken to that baseline only: one connection
# pipelining everything costs less per request outside the command than
# -c 50 -P 16 does, so --pipe ratios sit closer to the instruction ratios of
# `make profile` than the -P 16 ratios of the other rows. Any error reply, a
# count of replies short of the file's, an acquire not allowed or a release
# not answering 1 (INFO rl), or a key that does not hold exactly its 100
# leases afterwards (COST 0 PEEK: remaining 900, the state as it is; a plain
# PEEK answers as if it had taken one more) stops the benchmark with an error.
#
# Knobs (environment): REPS (3), N16 (requests at -P 16, 400000), N1 (at -P 1,
# 100000), NPIPE (commands per --pipe run, N16), CLIENTS (50), REDIS_SERVER
# (redis-server), OUT (markdown file).
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
N16=${N16:-400000}
N1=${N1:-100000}
NPIPE=${NPIPE:-$N16}
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

# name | stats command(s) (for INFO commandstats) | keys | command line
# keys: "one" (one key), "random" (-r 100000: random keys), "one -r N" (one
# key, -r N drawing the rest of the line, e.g. lease ids, from N values), or
# "pipe" (the command line names a --pipe run, see run_pipe_test).
# Allow paths use a rate no benchmark can exhaust; deny paths a key drained
# by its first call (limit 1 per hour).
# Listed so that each RL command runs right next to its baselines (INCR and
# SET PX on the same key pattern, its Lua equivalent): ratios are taken
# within each repetition and then their median reported, so the drift of a
# shared machine between distant measurements does not enter them.
tests=(
  "INCR one|incr|one|INCR bench:incr"
  "SET PX one|set|one|SET bench:set v PX 60000"
  "RL.ACQUIRE one, renewing 1 of 100 named leases|rl.acquire|one -r 100|RL.ACQUIRE bench:lease:renew 1000 600000 ID __rand_int__"
  "RL.GCRA one allow|rl.gcra|one|RL.GCRA bench:gcra:allow 4294967295 1000"
  "Lua GCRA one allow|evalsha|one|EVALSHA $sha_gcra 1 bench:lgcra:allow 4294967295 1000 4294967295 1"
  "RL.GCRA one deny|rl.gcra|one|RL.GCRA bench:gcra:deny 1 3600000"
  "RL.TOKENBUCKET one allow|rl.tokenbucket|one|RL.TOKENBUCKET bench:tb:allow 4294967295 4294967295 1000"
  "Lua TOKENBUCKET one allow|evalsha|one|EVALSHA $sha_tb 1 bench:ltb:allow 4294967295 4294967295 1000 1"
  "RL.TOKENBUCKET one deny|rl.tokenbucket|one|RL.TOKENBUCKET bench:tb:deny 1 1 3600000"
  "RL.SLIDE one allow|rl.slide|one|RL.SLIDE bench:slide:allow 4294967295 1000"
  "Lua SLIDE one allow|evalsha|one|EVALSHA $sha_slide 1 bench:lslide:allow 4294967295 1000 1"
  "RL.SLIDE one deny|rl.slide|one|RL.SLIDE bench:slide:deny 1 3600000"
  "INCR random|incr|random|INCR bench:incr:__rand_int__"
  "SET PX random|set|random|SET bench:set:__rand_int__ v PX 60000"
  "RL.ACQUIRE random (generated ids)|rl.acquire|random|RL.ACQUIRE bench:lease:__rand_int__ 100 60000"
  "RL.GCRA random|rl.gcra|random|RL.GCRA bench:gcra:__rand_int__ 100 60000"
  "Lua GCRA random|evalsha|random|EVALSHA $sha_gcra 1 bench:lgcra:__rand_int__ 100 60000 100 1"
  "RL.TOKENBUCKET random|rl.tokenbucket|random|RL.TOKENBUCKET bench:tb:__rand_int__ 100 100 60000"
  "Lua TOKENBUCKET random|evalsha|random|EVALSHA $sha_tb 1 bench:ltb:__rand_int__ 100 100 60000 1"
  "RL.SLIDE random|rl.slide|random|RL.SLIDE bench:slide:__rand_int__ 100 60000"
  "Lua SLIDE random|evalsha|random|EVALSHA $sha_slide 1 bench:lslide:__rand_int__ 100 60000 1"
  "RL.LOG random, limit 10|rl.log|random|RL.LOG bench:log:__rand_int__ 10 60000"
  "RL.LOG one, limit 1000|rl.log|one|RL.LOG bench:log:one 1000 60000"
  "SET PX one, --pipe|set|pipe|set"
  "RL.ACQUIRE + RL.RELEASE, key holding 100 leases, --pipe|rl.acquire rl.release|pipe|pairs"
)

# run_one PIPELINE "cmd line" KEYS -> requests per second
run_one() {
  local p=$1 line=$2 keys=$3 n
  if [ "$p" -eq 1 ]; then n=$N1; else n=$N16; fi
  local extra=()
  case $keys in
    random) extra=(-r 100000) ;;
    "one -r "*) extra=(-r "${keys#one -r }") ;;
  esac
  # shellcheck disable=SC2086
  redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -P "$p" "${extra[@]}" --csv $line 2>/dev/null \
    | awk -F'"' 'NR==2 {print $4}'
}

# The --pipe files (see the header), made once: NPIPE SETs; NPIPE / 2 pairs;
# the 100 held leases.
resp_awk='function resp(n, w,   s, k) { s = "*" n "\r\n"; for (k = 1; k <= n; k++) s = s "$" length(w[k]) "\r\n" w[k] "\r\n"; return s }'
npairs=$((NPIPE / 2))
awk -v n="$NPIPE" "$resp_awk"' BEGIN { split("SET bench:set v PX 60000", w, " "); c = resp(5, w); for (i = 0; i < n; i++) printf "%s", c }' >"$dir/set.resp"
awk -v n="$npairs" "$resp_awk"' BEGIN {
  split("RL.ACQUIRE bench:pool 1000 600000 ID x", a, " "); split("RL.RELEASE bench:pool x", r, " ")
  for (i = 0; i < n; i++) { a[6] = r[3] = "p-" i; printf "%s%s", resp(6, a), resp(3, r) } }' >"$dir/pairs.resp"
awk "$resp_awk"' BEGIN { split("RL.ACQUIRE bench:pool 1000 600000 ID x", a, " ")
  for (i = 0; i < 100; i++) { a[6] = "held-" i; printf "%s", resp(6, a) } }' >"$dir/held.resp"

fail() { echo "bench: $*" >&2; exit 1; }

# run_pipe FILE COMMANDS -> commands per second, from redis-cli's start to its
# last reply; fails unless every command was answered without an error.
run_pipe() {
  local file=$1 n=$2 t0 t1 out
  t0=$EPOCHREALTIME
  out=$(cli --pipe <"$file" 2>&1) || fail "redis-cli --pipe $(basename "$file"): $(grep -v '^All data\|^Last reply' <<<"$out" | head -3 | tr '\n' ' ')"
  t1=$EPOCHREALTIME
  grep -qx "errors: 0, replies: $n" <<<"$out" || fail "redis-cli --pipe $(basename "$file"): expected $n replies, no errors: $(tail -1 <<<"$out")"
  awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", n / (b - a)}'
}

# "calls allowed" of RL.ACQUIRE (rl_concurrency) and RL.RELEASE in INFO rl.
lease_counts() {
  cli INFO rl | tr -d '\r' | awk -F'[:,=]' '$1 == "rl_concurrency" || $1 == "rl_release" {printf "%s %s ", $3, $5}'
}

# run_pipe_test set|pairs -> commands per second (on a flushed server).
# Each failure exits its subshell (errexit does not reach into $(...)), and
# the caller's assignment then stops the script.
run_pipe_test() {
  case $1 in
    set) run_pipe "$dir/set.resp" "$NPIPE" ;;
    pairs)
      run_pipe "$dir/held.resp" 100 >/dev/null || exit 1
      local before after rate
      read -ra before <<<"$(lease_counts)"
      rate=$(run_pipe "$dir/pairs.resp" $((2 * npairs))) || exit 1
      read -ra after <<<"$(lease_counts)"
      local k
      for k in 0 1 2 3; do
        [ $((after[k] - before[k])) -eq "$npairs" ] \
          || fail "pairs: not every one of $npairs pairs acquired and released (INFO rl: rl_concurrency calls, allowed and rl_release calls, allowed went from ${before[*]} to ${after[*]})"
      done
      local remaining
      remaining=$(cli RL.ACQUIRE bench:pool 1000 600000 COST 0 PEEK | sed -n 3p)
      [ "$remaining" = 900 ] || fail "pairs: bench:pool should hold its 100 leases afterwards (COST 0 PEEK: remaining 900), remaining is '$remaining'"
      echo "$rate"
      ;;
    *) fail "unknown --pipe test $1" ;;
  esac
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
    IFS='|' read -r name _ keys line <<<"${tests[$i]}"
    if [ "$keys" = pipe ]; then
      cli FLUSHALL >/dev/null
      results["$i,pipe"]+="$(run_pipe_test "$line") "
      continue
    fi
    for p in 1 16; do
      cli FLUSHALL >/dev/null
      results["$i,$p"]+="$(run_one "$p" "$line" "$keys") "
    done
  done
  echo "bench: repetition $rep of $REPS done (${SECONDS} s)" >&2
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# usec_per_call: one dedicated -P 16 (or --pipe) run per test after a stats
# reset (for the pairs, after their 100 held leases are set up); a test with
# two stats commands reports both, "a / b".
declare -A usec
for i in "${!tests[@]}"; do
  IFS='|' read -r name stats keys line <<<"${tests[$i]}"
  cli FLUSHALL >/dev/null
  if [ "$line" = pairs ]; then run_pipe "$dir/held.resp" 100 >/dev/null; fi
  cli CONFIG RESETSTAT >/dev/null
  if [ "$line" = pairs ]; then
    run_pipe "$dir/pairs.resp" $((2 * npairs)) >/dev/null
  elif [ "$keys" = pipe ]; then
    run_pipe_test "$line" >/dev/null
  else
    run_one 16 "$line" "$keys" >/dev/null
  fi
  commandstats=$(cli INFO commandstats | tr -d '\r')
  usec[$i]=""
  for stat in $stats; do
    u=$(awk -F'[,=:]' -v s="cmdstat_$stat" 'tolower($1)==s {for (k=2;k<=NF;k++) if ($k=="usec_per_call") print $(k+1)}' <<<"$commandstats")
    usec[$i]+="${usec[$i]:+ / }$u"
  done
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
mem_lease=$(bytes_per_key "RL.ACQUIRE KEY 100 3600000")
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
    IFS='|' read -r name _ keys _ <<<"${tests[$i]}"
    [ "$keys" = pipe ] && continue
    r1=$(echo "${results[$i,1]}" | median)
    r16=$(echo "${results[$i,16]}" | median)
    if [ "$keys" = random ]; then pattern=random; else pattern=one; fi
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
  echo "RL.ACQUIRE + RL.RELEASE pairs (ids named by the client) on a key holding 100 leases, and SET PX on"
  echo "one key: $NPIPE commands from a RESP file by \`redis-cli --pipe\` (one connection, everything"
  echo "pipelined), timed to the last reply; medians, and the median of the per-repetition ratios:"
  echo
  echo "| test | commands per second | /SET PX --pipe | usec_per_call |"
  echo "|---|---:|---:|---:|"
  setpipe=$(find_idx "SET PX one, --pipe")
  for i in "${!tests[@]}"; do
    IFS='|' read -r name _ keys _ <<<"${tests[$i]}"
    [ "$keys" = pipe ] || continue
    printf '| %s | %.0f | %s | %s |\n' "$name" "$(echo "${results[$i,pipe]}" | median)" "$(ratio "$i" "$setpipe" pipe)" "${usec[$i]:--}"
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
  echo "| RL.ACQUIRE (one lease, generated id) | $mem_lease |"
  echo "| Lua GCRA (string state) | $mem_lua |"
} | tee "$OUT"
echo "bench: table written to $OUT (${SECONDS} s in all)" >&2
