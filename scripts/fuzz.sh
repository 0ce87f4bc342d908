#!/usr/bin/env bash
# Runs the coverage-guided fuzzers (fuzz/, afl.rs on the stable toolchain)
# for FUZZ_SECONDS each, from the committed seed corpus (fuzz/corpus/), and
# fails if any target crashed (a panic, a failed check) or hung, printing
# each such input's path and the first one's panic message.
#
#   FUZZ_SECONDS=N scripts/fuzz.sh [TARGET...]     # default: every target, 15 s each
#
# Targets (see src/module/fuzzing.rs): args (every command's argument
# parser and RL.ALL's spec grammar), rdb (every kind's RDB/DUMP loader),
# apply (RL.APPLY payloads of every kind), model (each kind on a master and
# a replica, lease sets and logs against their plain models).
#
# The tooling is installed on first use into gitignored folders, nothing
# system-wide: cargo-afl into .deps/cargo-bin, the AFL++ it builds (from the
# source the cargo-afl crate ships) into .deps/afl-data (XDG_DATA_HOME); a
# stamp says whether they are current. Builds go to target/fuzz/, each run's
# findings to target/fuzz/out/<target>/ (crashes/, hangs/): keep a finding
# by minimizing it into fuzz/regressions/<target>/, which
# tests/fuzz_corpus.rs replays.
#
# Why AFL++ through afl.rs: it instruments with the stable rustc's own
# SanitizerCoverage passes (no nightly, unlike cargo-fuzz), and cargo-afl
# builds AFL++ from the source its crate ships, with make and a C compiler
# only. honggfuzz-rs would need binutils-dev and libunwind-dev installed
# system-wide (apt), and Debian's afl++ package is older than what afl.rs
# expects.
#
# First it replays the corpus and fuzz/regressions/ through the same entry
# points without a fuzzer (tests/fuzz_corpus.rs, feature `fuzzing`).
#
# Environment: FUZZ_SECONDS (per target, default 15), CARGO (default cargo),
# FUZZ_JOBS (cargo -j, default 1), CARGO_TARGET_DIR (the corpus replay's,
# default target/), FUZZ_TARGET_DIR (the fuzzers', default target/fuzz). Exits 0 only if every target ran its
# time without a crash or a hang.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CARGO=${CARGO:-cargo}
SECONDS_EACH=${FUZZ_SECONDS:-15}
JOBS=${FUZZ_JOBS:-1}
AFL_VERSION=0.18.2
BIN_ROOT=$ROOT/.deps/cargo-bin
export XDG_DATA_HOME=$ROOT/.deps/afl-data
export PATH=$BIN_ROOT/bin:$PATH
# The corpus replay builds where the other tests do; the instrumented
# targets apart, in target/fuzz.
TEST_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$ROOT/target/fuzz}
OUT=$CARGO_TARGET_DIR/out
ALL_TARGETS=(args rdb apply model)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${ALL_TARGETS[@]}")

if ! [[ $SECONDS_EACH =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz: FUZZ_SECONDS must be a whole number of seconds, at least 1 (got '$SECONDS_EACH')" >&2
    exit 2
fi
for t in "${targets[@]}"; do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "fuzz: unknown target '$t' (targets: ${ALL_TARGETS[*]})" >&2; exit 2; }
done

# The tooling, once: cargo-afl, then AFL++ for this rustc.
want="cargo-afl $AFL_VERSION $(rustc --version)"
stamp=$ROOT/.deps/afl-data/.stamp
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    start=$SECONDS
    echo "fuzz: installing cargo-afl $AFL_VERSION into .deps/cargo-bin and AFL++ into .deps/afl-data"
    "$CARGO" install --quiet --locked --root "$BIN_ROOT" --version "$AFL_VERSION" -j "$JOBS" cargo-afl
    "$CARGO" afl config --build --force >/dev/null
    mkdir -p "$(dirname "$stamp")"
    echo "$want" >"$stamp"
    echo "fuzz: tooling installed in $((SECONDS - start)) s"
fi

# The corpus and the minimized findings, replayed without a fuzzer (in the
# usual target directory: only this crate is rebuilt, with the feature).
start=$SECONDS
echo "fuzz: replaying fuzz/corpus and fuzz/regressions (tests/fuzz_corpus.rs)"
if ! CARGO_TARGET_DIR=$TEST_TARGET_DIR "$CARGO" test --quiet -j "$JOBS" --features fuzzing \
    --test fuzz_corpus; then
    echo "fuzz: the corpus replay failed" >&2
    exit 1
fi
echo "fuzz: replayed in $((SECONDS - start)) s"

start=$SECONDS
echo "fuzz: building the targets (target/fuzz/release)"
"$CARGO" afl build --release --quiet -j "$JOBS" --manifest-path fuzz/Cargo.toml
echo "fuzz: built in $((SECONDS - start)) s"

# No UI, no CPU binding (the machine is shared), no core-dump or CPU-governor
# checks; fuzz a fixed time, then stop.
export AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_FAST_CAL=1 AFL_NO_WARN_INSTABILITY=1 AFL_SHUFFLE_QUEUE=1

failed=0
summary=()
for t in "${targets[@]}"; do
    rm -rf "${OUT:?}/$t"
    mkdir -p "$OUT/$t"
    dict=()
    [[ -f fuzz/dict/$t.dict ]] && dict=(-x "fuzz/dict/$t.dict")
    echo
    echo "== fuzz $t for ${SECONDS_EACH}s =="
    start=$SECONDS
    # -t: a call slower than 2 s is a hang (every call here takes micro-
    # seconds); -V: stop after the time.
    if ! "$CARGO" afl fuzz -i "fuzz/corpus/$t" -o "$OUT/$t" -V "$SECONDS_EACH" -t 2000 "${dict[@]}" \
        -- "$CARGO_TARGET_DIR/release/$t" >"$OUT/$t/afl.log" 2>&1; then
        echo "fuzz: afl-fuzz failed on $t:" >&2
        tail -n 30 "$OUT/$t/afl.log" >&2
        failed=1
        summary+=("$(printf '  %-6s FAILED (afl-fuzz did not run: %s)' "$t" "$OUT/$t/afl.log")")
        continue
    fi
    stats=$OUT/$t/default/fuzzer_stats
    execs=$(sed -n 's/^execs_done *: *//p' "$stats" 2>/dev/null || echo '?')
    paths=$(sed -n 's/^corpus_count *: *//p' "$stats" 2>/dev/null || echo '?')
    mapfile -t found < <(find "$OUT/$t/default/crashes" "$OUT/$t/default/hangs" -type f -name 'id:*' 2>/dev/null | sort)
    if [[ ${#found[@]} -gt 0 ]]; then
        failed=1
        echo "fuzz: $t: ${#found[@]} crashing or hanging input(s):" >&2
        printf '  %s\n' "${found[@]}" >&2
        echo "fuzz: $t: replaying ${found[0]}:" >&2
        RUST_BACKTRACE=0 "$CARGO_TARGET_DIR/release/$t" <"${found[0]}" 2>&1 | grep -v '^note: ' | head -n 20 >&2 || true
        echo "fuzz: $t: keep it as a regression: copy it (minimized: cargo afl tmin) into fuzz/regressions/$t/" >&2
        summary+=("$(printf '  %-6s FAILED %4ss  %s execs, %s inputs in the queue, %d crash/hang' "$t" $((SECONDS - start)) "$execs" "$paths" ${#found[@]})")
    else
        summary+=("$(printf '  %-6s ok     %4ss  %s execs, %s inputs in the queue' "$t" $((SECONDS - start)) "$execs" "$paths")")
    fi
done

echo
echo "== fuzz summary =="
printf '%s\n' "${summary[@]}"
exit $failed
