#!/usr/bin/env bash
# Runs the test suite the way `make test` does:
#
#   1. once, the targets that need no server: the library's unit tests, the
#      benches in test mode, and every tests/*.rs that does not use the
#      harness (no `mod common;`), such as the core's property tests; and the
#      set-up scripts' own tests (scripts/test-deps.sh);
#   2. then, for each server binary given, the integration suite: every
#      tests/*.rs that uses the harness (`mod common;`), which Cargo.toml
#      declares as a [[test]] requiring the `server-tests` feature (and
#      tests/split.rs checks it does), as one separate
#      `cargo test` run with REDIS_SERVER set to that server, under a header
#      that names the server and its version; then the example services'
#      tests (scripts/test-examples.sh) against the same server.
#
# Every server is run even when an earlier stage failed, and the summary at
# the end says which stages failed, so a failure is always attributed to the
# server it happened on.
#
#   scripts/test.sh [--no-unit] SERVER [SERVER...]
#
# Environment: CARGO (default cargo), REDIS_RL_MODULE (default
# target/release/libredis_rl.so, which must already be built; tests/panics.rs
# also loads target/release/hooks/libredis_rl.so, from `make build-hooks`).
set -uo pipefail
cd "$(dirname "$0")/.."

cargo=${CARGO:-cargo}
run_unit=1
if [[ ${1:-} == --no-unit ]]; then
    run_unit=0
    shift
fi
if [[ $# -eq 0 ]]; then
    echo "usage: $0 [--no-unit] SERVER [SERVER...]" >&2
    exit 2
fi

module=${REDIS_RL_MODULE:-$PWD/target/release/libredis_rl.so}
module=$(realpath -ms "$module")
if [[ ! -f $module ]]; then
    echo "test: module not built: $module (run make build)" >&2
    exit 1
fi
export REDIS_RL_MODULE=$module

# The integration suite: the [[test]] targets of Cargo.toml that require the
# `server-tests` feature. The unit half is every other test target: `--tests`
# without that feature leaves the integration suite out.
integration=()
while read -r name; do
    integration+=(--test "$name")
done < <(awk '
    /^\[/ { if (t && s) print n; t = ($0 == "[[test]]"); n = ""; s = 0; next }
    t && /^name *=/ { n = $0; sub(/^name *= *"/, "", n); sub(/".*/, "", n) }
    t && /^required-features *=/ && /"server-tests"/ { s = 1 }
    END { if (t && s) print n }' Cargo.toml)
if [[ ${#integration[@]} -eq 0 ]]; then
    echo "test: no [[test]] in Cargo.toml requires the server-tests feature" >&2
    exit 1
fi

results=()
failed=0
record() { # record LABEL STATUS SECONDS
    results+=("$(printf '  %-46s %-6s %4ss' "$1" "$2" "$3")")
    [[ $2 == ok ]] || failed=1
}

# "valkey-server 9.1.2" / "redis-server 7.0.15" from `--version`.
describe() {
    local out
    out=$("$1" --version 2>&1 | head -n1) || return 1
    case $out in
        "Valkey server v="*) out=${out#Valkey server v=}; echo "valkey-server ${out%% *}" ;;
        "Redis server v="*) out=${out#Redis server v=}; echo "redis-server ${out%% *}" ;;
        *) echo "$out" ;;
    esac
}

# Starts the server on a Unix socket only, with the module, and waits until
# it is ready: a clear error (with the server's log) if the binary does not
# run or cannot load the module, before any test runs.
preflight() { # preflight BINARY LABEL
    local bin=$1 label=$2 dir pid log deadline status=1
    dir=$(mktemp -d "${TMPDIR:-/tmp}/redis-rl-preflight.XXXXXX")
    log=$dir/server.log
    "$bin" --port 0 --unixsocket "$dir/s.sock" --save "" --appendonly no --daemonize no \
        --dir "$dir" --logfile "$log" --loadmodule "$module" </dev/null >"$dir/stdio.log" 2>&1 &
    pid=$!
    deadline=$((SECONDS + 10))
    while ((SECONDS < deadline)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            break
        fi
        if grep -qi "ready to accept connections" "$log" 2>/dev/null; then
            status=0
            break
        fi
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    if ((status == 0)) && ! grep -q "Module 'rl' loaded" "$log"; then
        status=1
    fi
    if ((status != 0)); then
        echo "test: $label ($bin) did not start with the module $module:" >&2
        tail -n 20 "$log" "$dir/stdio.log" >&2 2>/dev/null
    fi
    rm -rf "$dir"
    return $status
}

if ((run_unit)); then
    echo
    echo "== unit and property tests (no server) =="
    start=$SECONDS
    if "$cargo" test --features test-hooks --no-fail-fast --lib --bins --examples --benches --tests; then
        record "unit and property tests" ok $((SECONDS - start))
    else
        record "unit and property tests" FAILED $((SECONDS - start))
    fi
    echo
    echo "== set-up scripts (scripts/test-deps.sh) =="
    start=$SECONDS
    if bash scripts/test-deps.sh; then
        record "set-up scripts" ok $((SECONDS - start))
    else
        record "set-up scripts" FAILED $((SECONDS - start))
    fi
    # Coverage-guided fuzzing (afl.rs on the stable toolchain): the corpus
    # replayed, then each target FUZZ_SECONDS (default 15) s; `make fuzz`
    # runs it longer.
    echo
    echo "== fuzzing (scripts/fuzz.sh) =="
    start=$SECONDS
    if FUZZ_JOBS=${FUZZ_JOBS:-2} CARGO=$cargo bash scripts/fuzz.sh; then
        record "fuzzing" ok $((SECONDS - start))
    else
        record "fuzzing" FAILED $((SECONDS - start))
    fi
fi

# Release 0.1.0 of the module, for the rolling-upgrade test (an 0.1.0 master
# feeding a replica running this build); built once from this repository's
# history into .deps/.
if [[ -z ${RL_MODULE_0_1_0:-} ]]; then
    echo
    echo "== release 0.1.0 of the module, for the rolling-upgrade test =="
    start=$SECONDS
    if RL_MODULE_0_1_0=$(scripts/build-0.1.0.sh); then
        export RL_MODULE_0_1_0
        record "release 0.1.0 built (rolling upgrade)" ok $((SECONDS - start))
    else
        record "release 0.1.0 built (rolling upgrade)" FAILED $((SECONDS - start))
    fi
fi

# tests/top.rs runs examples/rl-top, which needs redis-py in examples/python/.deps.
if ! bash scripts/test-examples.sh --python-deps-only; then
    echo "test: could not install redis-py for examples/rl-top; tests/top.rs will say so" >&2
fi

for server in "$@"; do
    bin=$(command -v "$server" || true)
    if [[ -z $bin ]]; then
        echo "test: server binary not found: $server" >&2
        record "integration suite on $server" FAILED 0
        continue
    fi
    # Absolute, but symlinks kept: Debian's redis-server is a symlink to
    # redis-check-rdb, which acts on the name it is started under.
    bin=$(realpath -s "$bin")
    label=$(describe "$bin") || label=$server
    echo
    echo "== integration suite on $label ($bin) =="
    start=$SECONDS
    if ! preflight "$bin" "$label"; then
        record "integration suite on $label" FAILED $((SECONDS - start))
        continue
    fi
    if REDIS_SERVER=$bin "$cargo" test --features test-hooks,server-tests --no-fail-fast "${integration[@]}"; then
        record "integration suite on $label" ok $((SECONDS - start))
    else
        echo "== integration suite FAILED on $label ($bin) ==" >&2
        record "integration suite on $label" FAILED $((SECONDS - start))
    fi
    # The client libraries, the exporter and the Lua library against the
    # same server (each script installs its own packages, once).
    for suite in python-client node-client exporter lua docs; do
        script=scripts/test-$suite.sh
        [[ -f $script ]] || continue
        echo
        echo "== $suite on $label ($bin) =="
        start=$SECONDS
        if REDIS_SERVER=$bin bash "$script"; then
            record "$suite on $label" ok $((SECONDS - start))
        else
            echo "== $suite FAILED on $label ($bin) ==" >&2
            record "$suite on $label" FAILED $((SECONDS - start))
        fi
    done
    # The example services (examples/python, examples/node) against the same server.
    echo
    echo "== examples on $label ($bin) =="
    start=$SECONDS
    if REDIS_SERVER=$bin bash scripts/test-examples.sh; then
        record "examples on $label" ok $((SECONDS - start))
    else
        echo "== examples FAILED on $label ($bin) ==" >&2
        record "examples on $label" FAILED $((SECONDS - start))
    fi
done

# Once: the release files (the module stripped, its debug info, checksums),
# built and loaded into the first server.
if [[ -x scripts/dist.sh && $# -gt 0 ]]; then
    echo
    echo "== release files (scripts/dist.sh) =="
    start=$SECONDS
    if REDIS_SERVER=$(command -v "$1" || echo "$1") MODULE=$module bash scripts/dist.sh; then
        record "release files (make dist)" ok $((SECONDS - start))
    else
        record "release files (make dist)" FAILED $((SECONDS - start))
    fi
fi

# Once: the Debian package installed into a fresh Debian 12 root and run
# with Debian's redis-server (needs root; the root is cached in .deps/debian/).
if [[ -f scripts/test-deb.sh && $# -gt 0 ]]; then
    echo
    echo "== Debian package on Debian 12 (scripts/test-deb.sh) =="
    start=$SECONDS
    deb=$(ls dist/redis-rl_*.deb 2>/dev/null | head -n1)
    if REDIS_RL_DEB=$deb REDIS_RL_MODULE=$module bash scripts/test-deb.sh; then
        record "Debian package (Debian 12)" ok $((SECONDS - start))
    else
        record "Debian package (Debian 12)" FAILED $((SECONDS - start))
    fi
fi

# Once, on the first server: redis-server under valgrind memcheck with the
# module, every command and type callback (no invalid access, no leak).
if [[ -x scripts/memcheck.sh && $# -gt 0 ]]; then
    bin=$(realpath -s "$(command -v "$1" || echo "$1")")
    echo
    echo "== memcheck (valgrind) on $(describe "$bin" || echo "$1") =="
    start=$SECONDS
    if REDIS_SERVER=$bin REDIS_RL_MODULE=$module bash scripts/memcheck.sh; then
        record "memcheck (valgrind)" ok $((SECONDS - start))
    else
        record "memcheck (valgrind)" FAILED $((SECONDS - start))
    fi
fi

# Once, on the first server: a short soak (every kind, a replica, AOF
# rewrites; states equal, memory flat). `make soak DURATION=1800` runs it long.
if [[ -x scripts/soak.sh && $# -gt 0 ]]; then
    echo
    echo "== soak, 20 s (scripts/soak.sh) =="
    start=$SECONDS
    if DURATION=${SOAK_SECONDS:-20} REDIS_SERVER=$(command -v "$1" || echo "$1") REDIS_RL_MODULE=$module bash scripts/soak.sh; then
        record "soak (20 s)" ok $((SECONDS - start))
    else
        record "soak (20 s)" FAILED $((SECONDS - start))
    fi
fi

# Once, on the first server: failover under Sentinel, partitions and pauses
# (tests/faults; the over-admission at 0, 1 and 10 ms of replication lag).
if [[ -x scripts/test-failover.sh && $# -gt 0 ]]; then
    bin=$(realpath -s "$(command -v "$1" || echo "$1")")
    echo
    echo "== failover and partitions (tests/faults) on $(describe "$bin" || echo "$1") =="
    start=$SECONDS
    if REDIS_SERVER=$bin REDIS_RL_MODULE=$module bash scripts/test-failover.sh; then
        record "failover and partitions" ok $((SECONDS - start))
    else
        record "failover and partitions" FAILED $((SECONDS - start))
    fi
fi

# Once, on the first server: the exporter's end-to-end run (a 3-master
# cluster under traffic, a real Prometheus, the Grafana dashboard's queries,
# headless Chromium on the live page).
if [[ -x scripts/test-exporter.sh && $# -gt 0 ]]; then
    bin=$(realpath -s "$(command -v "$1" || echo "$1")")
    echo
    echo "== exporter end to end (Prometheus, Grafana queries, Chromium) on $(describe "$bin" || echo "$1") =="
    start=$SECONDS
    if REDIS_SERVER=$bin RL_EXPORTER_FULL=1 bash scripts/test-exporter.sh; then
        record "exporter end to end" ok $((SECONDS - start))
    else
        record "exporter end to end" FAILED $((SECONDS - start))
    fi
fi

echo
echo "== summary =="
printf '%s\n' "${results[@]}"
exit $failed
