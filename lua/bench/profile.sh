#!/usr/bin/env bash
# Instructions per call inside redis-server's call() (callgrind, as
# scripts/profile.sh counts the module's), for the Lua library's functions
# next to the module's commands and the Lua baselines in scripts/lua:
# repeatable whatever else the machine does. Usage:
#   REDIS_SERVER=... REDIS_RL_MODULE=... lua/bench/profile.sh [N]
# (N calls per row, default 2000; ONLY, an extended regex, picks rows).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-2000}
SERVER=${REDIS_SERVER:-redis-server}
MODULE=$(realpath "${REDIS_RL_MODULE:-target/release/libredis_rl.so}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
row() {
  local name=$1; shift
  if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then return 0; fi
  rm -rf "${out:?}"/*
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  valgrind --tool=callgrind --toggle-collect=call --callgrind-out-file="$out/cg" \
    "$SERVER" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$out" \
    --loadmodule "$MODULE" >/dev/null 2>&1 &
  local pid=$!
  CALLGRIND_PID=$pid python3 lua/bench/drive.py "$port" "$N" "$@"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local ir
  # The set-up (library load, script loads, a warm-up call) is not counted:
  # drive.py zeroes the counters after it (callgrind_control -z).
  ir=$(callgrind_annotate "$out"/cg* 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}' | tail -1)
  printf '| %s | %d |\n' "$name" $(( ir / N ))
}
echo "| call ($N calls, one key, allowed) | instructions per call |"
echo "|---|---|"
# 10^6 per second (never denied in N calls): the library's plain-number path.
row "RL.GCRA" RL.GCRA KEY 1000000 1000
row "FCALL rl_gcra" FCALL rl_gcra 1 KEY 1000000 1000
row "EVALSHA rl_gcra (library, EVAL form)" EVALSHA_LIB 1 KEY rl_gcra 1000000 1000
row "EVALSHA scripts/lua/gcra.lua" EVALSHA_BASE:gcra 1 KEY 1000000 1000 1000000 1
# 10^9 per second: a unit of 1 ns; B * P past 2^53, but P / L is 1 / 1.
row "FCALL rl_gcra 10^9 per second" FCALL rl_gcra 1 KEY 1000000000 1000
# 999,999,937 (a prime) per second: room * L past 2^53 on every call, the
# remaining count formed with multi-limb integers.
row "FCALL rl_gcra 999999937 per second" FCALL rl_gcra 1 KEY 999999937 1000
row "RL.TOKENBUCKET" RL.TOKENBUCKET KEY 1000000 1000000 1000
row "FCALL rl_tokenbucket" FCALL rl_tokenbucket 1 KEY 1000000 1000000 1000
row "EVALSHA scripts/lua/tokenbucket.lua" EVALSHA_BASE:tokenbucket 1 KEY 1000000 1000000 1000 1
row "RL.SLIDE" RL.SLIDE KEY 1000000 1000
row "FCALL rl_slide" FCALL rl_slide 1 KEY 1000000 1000
row "EVALSHA scripts/lua/slide.lua" EVALSHA_BASE:slide 1 KEY 1000000 1000 1
row "RL.LOG" RL.LOG KEY 10000 1000
row "FCALL rl_log" FCALL rl_log 1 KEY 10000 1000
row "RL.QUOTA DAY" RL.QUOTA KEY 1000000 DAY
row "FCALL rl_quota DAY" FCALL rl_quota 1 KEY 1000000 DAY
row "RL.QUOTA DAY TZ America/New_York" RL.QUOTA KEY 1000000 DAY TZ America/New_York
row "FCALL rl_quota DAY TZ America/New_York" FCALL rl_quota 1 KEY 1000000 DAY TZ America/New_York
row "RL.ACQUIRE + RL.RELEASE" PAIR_MODULE
row "FCALL rl_acquire + rl_release" PAIR_LIB
row "SET PX" SET KEY 1 PX 100000
