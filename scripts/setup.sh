#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Install, on Debian or Ubuntu (apt-get; root, or sudo), what the build
# needs; with --tests also what the tests need, with --ci also what the
# other .ci/run stages need. Installs only the packages missing; prints
# nothing and does nothing when none is.
#   scripts/setup.sh [--tests | --ci]
set -euo pipefail
level=build
case "${1:-}" in
"") ;;
--tests) level=tests ;;
--ci) level=ci ;;
*) echo "usage: scripts/setup.sh [--tests | --ci]" >&2; exit 2 ;;
esac

# Each entry: a Debian package, and the command or file that shows it is
# there (installed some other way counts too).
# The library and dkperf: a C11 compiler, CMake, and elfutils' libelf (found
# through pkg-config) for function names in dkperf report.
pkgs=(cmake:cmake make:make gcc:gcc libc6-dev:/usr/include/stdio.h pkg-config:pkg-config
      libelf-dev:/usr/include/gelf.h)
if [ "$level" != build ]; then
    pkgs+=(
        python3:python3                 # the test scripts
        g++:g++                         # bench/time_to_answer's google benchmark side
        libbenchmark-dev:/usr/include/benchmark/benchmark.h
        binutils:objdump                # the exported symbols
        groff-base:groff                # the man page renders without warnings
        valgrind:valgrind               # memcheck tests of the API
        strace:strace                   # report opens no image it should not
        hyperfine:hyperfine             # dkperf bench's exports checked against hyperfine's;
                                        # bench/bench-overhead's anchor
        clang-format:clang-format       # scripts/check-format.sh (Debian 12's: 14)
        linux-perf:perf                 # dkperf stat checked against perf stat
        chromium:chromium               # renders the HTML flame graph and dkbench report
        fonts-liberation:/usr/share/fonts/truetype/liberation  # whose layout is measured in
                                        # Arial's metrics (another font is wider)
    )
fi
if [ "$level" = ci ]; then
    pkgs+=(
        clang:clang                     # sanitizer builds, libFuzzer
        llvm:llvm-nm llvm:llvm-objdump
        libclang-rt-dev:libclang-rt-dev # clang's sanitizer and libFuzzer runtimes
        nodejs:node npm:npm             # the macOS cross-build's Zig
        golang-go:go                    # go tool pprof reads report --pprof
        libbenchmark-tools:/usr/share/benchmark/compare.py  # google's compare.py reads
                                        # --gbench-json (its U test needs numpy and scipy)
        python3-numpy:/usr/lib/python3/dist-packages/numpy
        python3-scipy:/usr/lib/python3/dist-packages/scipy
        libiberty-dev:/usr/include/libiberty/demangle.h  # report's C++ and Rust names
    )
fi

command -v dpkg-query >/dev/null && command -v apt-get >/dev/null || {
    echo "setup.sh: no apt-get here; install by hand: ${pkgs[*]%%:*}" >&2
    exit 1
}
missing=()
for entry in "${pkgs[@]}"; do
    p=${entry%%:*} probe=${entry#*:}
    case "$probe" in
    /*) [ -e "$probe" ] && continue ;;
    *) command -v "$probe" >/dev/null && continue ;;
    esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && continue
    [[ " ${missing[*]} " == *" $p "* ]] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
        echo "setup.sh: not root and no sudo; as root: apt-get install ${missing[*]}" >&2
        exit 1
    }
    sudo=sudo
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
