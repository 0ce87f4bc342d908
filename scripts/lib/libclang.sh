# shellcheck shell=bash
# Finds the libclang shared library the way bindgen finds it at build time
# (the clang-sys crate, with bindgen's "runtime" feature, which the
# redis-module crate enables), so that scripts/deps.sh installs libclang only
# when bindgen really would not find it. Sourced by scripts/deps.sh and tested
# on fake directory trees by scripts/test-deps.sh.
#
# What clang-sys 1.x accepts, and where it looks:
#   - file names libclang.so, libclang-*.so, libclang.so.*, libclang-*.so.*,
#     but never one containing "-cpp." (libclang-cpp.so.14 is LLVM's C++
#     library, which many packages pull in; bindgen cannot use it);
#   - only a valid shared library: an ELF file of this machine's class
#     (64-bit here); a dangling symlink does not count;
#   - if LIBCLANG_PATH is set, only there: that file, if it is one of the
#     names above, or else that directory;
#   - otherwise in the lib/, lib64/ and bin/ of `llvm-config --prefix`
#     (LLVM_CONFIG_PATH, default llvm-config), in the directories of
#     LD_LIBRARY_PATH and LIBRARY_PATH, and in the directories matching
#     /usr/local/llvm*/lib*, /usr/local/lib*/*/*, /usr/local/lib*/*,
#     /usr/local/lib*, /usr/lib*/*/*, /usr/lib*/*, /usr/lib*
#     (/usr/lib/llvm-14/lib and /usr/lib/x86_64-linux-gnu among them).
#
#   libclang_find [ROOT]
#
# prints the first library found and returns 0, or returns 1 if there is
# none. ROOT (default empty, i.e. /) is prefixed to the fixed directories
# above, so that a test can point it at a fake tree; the paths taken from the
# environment are used as they are.

# The file-name patterns clang-sys accepts on Linux (with "runtime").
_libclang_patterns=(libclang.so 'libclang-*.so' 'libclang.so.*' 'libclang-*.so.*')

# _libclang_usable FILE: a name clang-sys accepts, and a 64-bit ELF file
# (what clang-sys's validate_library checks on a 64-bit target).
_libclang_usable() {
    local f=$1 name header
    name=${f##*/}
    [[ $name != *-cpp.* ]] || return 1
    [[ -f $f && -r $f ]] || return 1
    # "7f 45 4c 46 02": the ELF magic, then EI_CLASS = ELFCLASS64.
    header=$(LC_ALL=C od -An -tx1 -N5 -- "$f" 2>/dev/null | tr -d ' \n') || return 1
    [[ $header == 7f454c4602 ]]
}

# _libclang_search_dirs DIR_GLOB...: prints the first usable library in the
# directories matching the globs, returns 1 if none.
_libclang_search_dirs() {
    # No word splitting of the globs below (a directory may hold spaces),
    # only pathname expansion.
    local IFS='' restore dir_glob pattern f
    restore=$(shopt -p nullglob)
    shopt -s nullglob
    for dir_glob in "$@"; do
        for pattern in "${_libclang_patterns[@]}"; do
            # dir_glob is a glob on purpose; pattern is one too.
            # shellcheck disable=SC2206
            for f in $dir_glob/$pattern; do
                if _libclang_usable "$f"; then
                    eval "$restore"
                    printf '%s\n' "$f"
                    return 0
                fi
            done
        done
    done
    eval "$restore"
    return 1
}

# _libclang_quote DIR: DIR as a glob that matches only itself (clang-sys
# escapes the directories it takes from the environment).
_libclang_quote() {
    printf '%s' "$1" | sed 's/[][*?\\]/\\&/g'
}

libclang_find() {
    local root=${1:-} dirs=() d prefix
    root=${root%/}

    if [[ -n ${LIBCLANG_PATH+set} ]]; then
        local p=${LIBCLANG_PATH%/} name
        name=${p##*/}
        # A file with an accepted name: that file only.
        if [[ -f $p ]] && _libclang_usable "$p"; then
            for d in "${_libclang_patterns[@]}"; do
                # shellcheck disable=SC2053
                if [[ $name == $d ]]; then
                    printf '%s\n' "$p"
                    return 0
                fi
            done
        fi
        # Otherwise a directory.
        _libclang_search_dirs "$(_libclang_quote "${LIBCLANG_PATH}")"
        return
    fi

    if prefix=$("${LLVM_CONFIG_PATH:-llvm-config}" --prefix 2>/dev/null) && [[ -n $prefix ]]; then
        prefix=$(_libclang_quote "${prefix%%$'\n'*}")
        dirs+=("$prefix/bin" "$prefix/lib" "$prefix/lib64")
    fi
    local var parts
    for var in LD_LIBRARY_PATH LIBRARY_PATH; do
        IFS=: read -r -a parts <<<"${!var:-}"
        for d in "${parts[@]}"; do
            [[ -n $d ]] && dirs+=("$(_libclang_quote "$d")")
        done
    done
    root=$(_libclang_quote "$root")
    dirs+=(
        "$root/usr/local/llvm*/lib*"
        "$root/usr/local/lib*/*/*"
        "$root/usr/local/lib*/*"
        "$root/usr/local/lib*"
        "$root/usr/lib*/*/*"
        "$root/usr/lib*/*"
        "$root/usr/lib*"
    )
    _libclang_search_dirs "${dirs[@]}"
}
