#!/usr/bin/env bash
# Tests scripts/lib/libclang.sh, the libclang detection of scripts/deps.sh,
# on fake directory trees: it must find what bindgen (clang-sys) would load,
# and nothing else. Needs no server and no libclang; `make test` runs it in
# its no-server stage (scripts/test.sh).
#
#   scripts/test-deps.sh
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/libclang.sh
source scripts/lib/libclang.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/redis-rl-test-deps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
n=0

# A stand-in for a shared library: the ELF header's first bytes, with the
# class byte given (02 = 64-bit, 01 = 32-bit).
fake_lib() { # fake_lib PATH [CLASS]
    mkdir -p "$(dirname "$1")"
    printf '\177ELF' >"$1"
    printf "\\${2:-002}\\001\\001\\000" >>"$1"
    head -c 64 /dev/zero >>"$1"
}

# expect CASE WANT ROOT: WANT is a path (found) or "missing". Runs in a
# subshell with only the environment the case sets (no llvm-config, no
# LD_LIBRARY_PATH or LIBRARY_PATH from the caller).
expect() {
    local name=$1 want=$2 root=$3 got
    n=$((n + 1))
    got=$(libclang_find "$root") || got=missing
    if [[ $got == "$want" ]]; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name: got $got, want $want"
        failures=$((failures + 1))
    fi
}
unset LIBCLANG_PATH LD_LIBRARY_PATH LIBRARY_PATH
export LLVM_CONFIG_PATH=$tmp/no-llvm-config

# Each case gets a fresh root.
case_root() { mkdir -p "$tmp/$1" && echo "$tmp/$1"; }

r=$(case_root empty)
expect "an empty machine has no libclang" missing "$r"

# The machine this issue came from: LLVM 14's C++ library only.
r=$(case_root cpp-only)
fake_lib "$r/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14"
fake_lib "$r/usr/lib/llvm-14/lib/libclang-cpp.so.14"
expect "only libclang-cpp.so.14 (Debian's libclang-cpp14) is not libclang" missing "$r"

r=$(case_root cpp-dev)
fake_lib "$r/usr/lib/llvm-14/lib/libclang-cpp.so"
expect "libclang-cpp.so (libclang-cpp14-dev) is not libclang either" missing "$r"

r=$(case_root static-only)
fake_lib "$r/usr/lib/llvm-14/lib/libclangAST.a"
fake_lib "$r/usr/lib/llvm-14/lib/libclangBasic.a"
expect "the static clang libraries are not libclang" missing "$r"

r=$(case_root versioned)
fake_lib "$r/usr/lib/llvm-14/lib/libclang-14.so"
fake_lib "$r/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14"
expect "libclang-14.so in /usr/lib/llvm-14/lib" "$r/usr/lib/llvm-14/lib/libclang-14.so" "$r"

r=$(case_root suffix)
fake_lib "$r/usr/lib/x86_64-linux-gnu/libclang.so.1"
expect "libclang.so.1 (the runtime package only, bindgen's runtime loading takes it)" \
    "$r/usr/lib/x86_64-linux-gnu/libclang.so.1" "$r"

r=$(case_root runtime-only)
fake_lib "$r/usr/lib/x86_64-linux-gnu/libclang-14.so.14.0.6"
expect "libclang-14.so.14.0.6 (Debian's libclang1-14)" "$r/usr/lib/x86_64-linux-gnu/libclang-14.so.14.0.6" "$r"

r=$(case_root dev)
fake_lib "$r/usr/lib/llvm-14/lib/libclang-14.so.1"
ln -s libclang-14.so.1 "$r/usr/lib/llvm-14/lib/libclang.so"
expect "libclang.so, a symlink (libclang-dev)" "$r/usr/lib/llvm-14/lib/libclang.so" "$r"

r=$(case_root local)
fake_lib "$r/usr/local/lib/libclang.so"
expect "libclang.so in /usr/local/lib" "$r/usr/local/lib/libclang.so" "$r"

r=$(case_root dangling)
mkdir -p "$r/usr/lib/llvm-14/lib"
ln -s libclang-14.so.1 "$r/usr/lib/llvm-14/lib/libclang.so"
expect "a dangling libclang.so symlink does not count" missing "$r"

r=$(case_root elf32)
fake_lib "$r/usr/lib/i386-linux-gnu/libclang-14.so.1" 001
expect "a 32-bit libclang does not count (bindgen rejects it)" missing "$r"

r=$(case_root not-elf)
mkdir -p "$r/usr/lib/llvm-14/lib"
echo 'INPUT(libclang-14.so.1)' >"$r/usr/lib/llvm-14/lib/libclang.so"
expect "a file that is not an ELF library does not count" missing "$r"

r=$(case_root too-deep)
fake_lib "$r/usr/lib/a/b/c/libclang.so"
expect "deeper than /usr/lib/*/*/ is not searched (nor by clang-sys)" missing "$r"

# LIBCLANG_PATH: only that place is searched, as clang-sys does.
r=$(case_root env)
fake_lib "$tmp/env-elsewhere/my llvm/libclang-17.so"
LIBCLANG_PATH="$tmp/env-elsewhere/my llvm" \
    expect "LIBCLANG_PATH, a directory outside the usual ones (with a space)" \
    "$tmp/env-elsewhere/my llvm/libclang-17.so" "$r"
LIBCLANG_PATH="$tmp/env-elsewhere/my llvm/libclang-17.so" \
    expect "LIBCLANG_PATH, the library file itself" "$tmp/env-elsewhere/my llvm/libclang-17.so" "$r"
fake_lib "$r/usr/lib/llvm-14/lib/libclang.so"
LIBCLANG_PATH="$tmp/env-empty" \
    expect "LIBCLANG_PATH without libclang: missing, even with one in /usr/lib (bindgen looks only there)" \
    missing "$r"
mkdir -p "$tmp/env-cpp"
fake_lib "$tmp/env-cpp/libclang-cpp.so.14"
LIBCLANG_PATH="$tmp/env-cpp" expect "LIBCLANG_PATH with libclang-cpp only" missing "$r"

# LD_LIBRARY_PATH and LIBRARY_PATH are searched too.
r=$(case_root ld)
fake_lib "$tmp/ld-dir/libclang.so.20.1"
LD_LIBRARY_PATH="/nonexistent:$tmp/ld-dir" \
    expect "libclang in a directory of LD_LIBRARY_PATH" "$tmp/ld-dir/libclang.so.20.1" "$r"
LIBRARY_PATH="$tmp/ld-dir" expect "libclang in a directory of LIBRARY_PATH" "$tmp/ld-dir/libclang.so.20.1" "$r"

# llvm-config --prefix: its lib/ is searched.
fake_lib "$tmp/llvm-prefix/lib/libclang.so"
printf '#!/bin/sh\necho "%s"\n' "$tmp/llvm-prefix" >"$tmp/llvm-config"
chmod +x "$tmp/llvm-config"
LLVM_CONFIG_PATH="$tmp/llvm-config" \
    expect "libclang in the lib/ of llvm-config --prefix" "$tmp/llvm-prefix/lib/libclang.so" "$(case_root llvm)"

# deps.sh itself uses the function (with the real root).
n=$((n + 1))
if grep -q 'libclang_find' scripts/deps.sh && ! grep -q 'libclang\*\.so' scripts/deps.sh; then
    echo "ok $n - scripts/deps.sh detects libclang with libclang_find"
else
    echo "not ok $n - scripts/deps.sh does not use libclang_find"
    failures=$((failures + 1))
fi

if ((failures)); then
    echo "test-deps: $failures of $n failed" >&2
    exit 1
fi
echo "test-deps: all $n passed"
