#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Run the test suite on a real (emulated) hardware PMU: cross-build for
# aarch64, boot Debian's arm64 kernel under qemu-system-aarch64 (TCG,
# -cpu max: PMUv3 with 6 event counters and the cycle counter; -icount
# shift=0: exact instruction counts; -smp 1: per-thread counts exact) with an
# initramfs holding the build tree at its host path, run every ctest test
# that needs no cmake or python there, and turn the console into a verdict.
#
# usage: tests/qemu/run.sh [BUILD_DIR]      (default: build-qemu)
# env:   DKPERF_QEMU_CACHE  downloads (default ~/.cache/dkperf-qemu)
#        DKPERF_QEMU_TIMEOUT  seconds for the whole guest (default 900)
#        DKPERF_QEMU_TESTS  ctest -R regex of the tests to run (default: all)
#        KPKG  the kernel package (default: newest linux-image-*-arm64-unsigned)
# Needs root for apt-get when something is missing. Exit status 0 when no
# test failed.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$src/build-qemu}")
cache=${DKPERF_QEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dkperf-qemu}
guest_timeout=${DKPERF_QEMU_TIMEOUT:-900}
t0=$(date +%s)
step() { printf '== qemu-arm64: %s (%ss)\n' "$*" "$(( $(date +%s) - t0 ))"; }
mkdir -p "$out" "$cache"

step "host packages"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
# C++ and google benchmark for arm64 (multiarch), for the programs that
# count with dkperf/benchmark.hpp.
command -v aarch64-linux-gnu-g++ >/dev/null || need+=(g++-aarch64-linux-gnu)
[ -e /usr/lib/aarch64-linux-gnu/cmake/benchmark/benchmarkConfig.cmake ] ||
    need+=(libbenchmark-dev:arm64)
command -v cpio >/dev/null || need+=(cpio)
command -v cmake >/dev/null || need+=(cmake make)
command -v python3 >/dev/null || need+=(python3)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
    $sudo apt-get update -qq
fi
if [ ${#need[@]} -gt 0 ]; then
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${need[@]}" >/dev/null
fi

# (dkperf report's ELF symbols need libelf, which pkg-config would find for
# the host, not for aarch64: the guest's dkperf is built without it and
# shows images and offsets.)
# Debian arm64 packages, downloaded once: the kernel (its vmlinuz is an
# uncompressed Image), busybox for /init, bash for the tests' scripts.
step "arm64 kernel, busybox, bash (cache $cache)"
fetch_deb() { # package -> extracted under $cache/root
    local pkg=$1
    [ -f "$cache/$pkg.done" ] && return 0
    (cd "$cache" && rm -f "${pkg}"_*_arm64.deb &&
        { apt-get download -q "$pkg:arm64" >/dev/null 2>&1 ||
          { $sudo apt-get update -qq && apt-get download -q "$pkg:arm64" >/dev/null; }; } &&
        dpkg-deb -x "${pkg}"_*_arm64.deb root && rm -f "${pkg}"_*_arm64.deb &&
        touch "$pkg.done") || { echo "qemu-arm64: cannot download $pkg:arm64 from Debian" >&2; exit 1; }
}
kpkg=${KPKG:-}
if [ -z "$kpkg" ]; then
    kpkg=$(cat "$cache/kernel-package" 2>/dev/null || true)
fi
if [ -z "$kpkg" ] || [ ! -f "$cache/Image-$kpkg" ]; then
    [ -n "$kpkg" ] || kpkg=$(apt-cache search --names-only '^linux-image-[0-9.]+-[0-9]+-arm64-unsigned$' |
        awk '{print $1}' | sort -V | tail -1)
    [ -n "$kpkg" ] || { $sudo apt-get update -qq; kpkg=$(apt-cache search --names-only \
        '^linux-image-[0-9.]+-[0-9]+-arm64-unsigned$' | awk '{print $1}' | sort -V | tail -1); }
    [ -n "$kpkg" ] || { echo "qemu-arm64: no linux-image-*-arm64-unsigned in the apt lists" >&2; exit 1; }
    (cd "$cache" && rm -rf kpkg && apt-get download -q "$kpkg:arm64" >/dev/null &&
        dpkg-deb -x "$kpkg"_*_arm64.deb kpkg && cp kpkg/boot/vmlinuz-* "Image-$kpkg" &&
        rm -rf kpkg "$kpkg"_*_arm64.deb) ||
        { echo "qemu-arm64: cannot download the kernel $kpkg:arm64" >&2; exit 1; }
    echo "$kpkg" >"$cache/kernel-package"
fi
echo "kernel: $kpkg"
fetch_deb busybox-static
fetch_deb bash
fetch_deb libtinfo6

step "cross-build for aarch64"
build=$out/aarch64
cmake -S "$src" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux.cmake" \
      -DDKPERF_WERROR=ON -DDKPERF_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DDKPERF_NO_LIBELF=ON >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null

# The tests as ctest knows them, as lines of a shell script for the guest:
#   t NAME SKIP_RC PASS_RE FAIL_RE DIR VAR=value... COMMAND ARGS...
#   s NAME REASON          (not run in the guest)
step "test list"
ctest_args=(--test-dir "$build" --show-only=json-v1)
[ -n "${DKPERF_QEMU_TESTS:-}" ] && ctest_args+=(-R "$DKPERF_QEMU_TESTS")
ctest "${ctest_args[@]}" >"$out/tests.json"
python3 - "$out/tests.json" "$out/tests.sh" <<'EOF'
import json, os, shlex, sys
tests = json.load(open(sys.argv[1]))["tests"]
lines, tmpdirs = [], set()
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    name, cmd = t["name"], t.get("command") or []
    tool = os.path.basename(cmd[0]) if cmd else ""
    tmpdirs.update(e[len("TMPDIR="):] for e in props.get("ENVIRONMENT", []) if e.startswith("TMPDIR="))
    if props.get("DISABLED"):
        lines.append(f"s {shlex.quote(name)} 'disabled on this platform'")
    elif name in ("tmpdir.empty_before", "tmpdir.left_empty", "tmpdir.tests_use_tmpdir"):
        # ctest's fixtures order them around every other test; the guests
        # run shards of the list in turn, so the host's run checks this.
        lines.append(f"s {shlex.quote(name)} 'a check of the host run (the folder is made below)'")
    elif any("/scripts/" in w for w in cmd):
        # Checks of the source tree (its layout, its format): the guest has
        # the build, not scripts/; the host's run checks them.
        lines.append(f"s {shlex.quote(name)} 'a check of the source tree, run on the host'")
    elif tool in ("cmake", "python3", "python", "valgrind"):
        lines.append(f"s {shlex.quote(name)} {shlex.quote('runs ' + tool + ', which the guest does not have')}")
    elif any(os.path.basename(w) == "valgrind" for w in cmd):
        lines.append(f"s {shlex.quote(name)} 'runs valgrind, which the guest does not have'")
    elif name.startswith("dkperf.malloc_failures."):
        lines.append(f"s {shlex.quote(name)} {shlex.quote('a failed allocation crashed dkperf stat -a here once and is not diagnosed yet (the dynamic loader or dkperf); the malloc sweep runs on x86_64')}")
    elif cmd[0].endswith(".sh") and "python3" in open(cmd[0]).read():
        lines.append(f"s {shlex.quote(name)} {shlex.quote(tool + ' runs python3, which the guest does not have')}")
    else:
        # The guest's grep matches line by line, where "[^\n]" is "."; a
        # newline left in a word would split the test's line in two.
        res = ["|".join(props.get(k, [])).replace("[^\n]", ".")
               for k in ("PASS_REGULAR_EXPRESSION", "FAIL_REGULAR_EXPRESSION")]
        words = [name, str(props.get("SKIP_RETURN_CODE", ""))] + res + \
                [props.get("WORKING_DIRECTORY", "/")] + props.get("ENVIRONMENT", []) + cmd
        if any("\n" in w for w in words):
            lines.append(f"s {shlex.quote(name)} 'a newline in its command or regular expression'")
            continue
        # A test labelled "figures" has its output in the log, pass or not.
        show = "; sed 's/^/   | /' /tmp/out" if "figures" in props.get("LABELS", []) else ""
        lines.append("t " + " ".join(shlex.quote(w) for w in words) + show)
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
# The folders the tests' TMPDIR names (the host makes them in a fixture).
open(sys.argv[2] + ".tmpdirs", "w").write("".join(d + "\n" for d in sorted(tmpdirs)))
EOF
# bench/overhead's pmu case: instructions per dk_thread_sample with
# user-space reads, counted by the emulated PMU; its figures go to the log.
if [ -z "${DKPERF_QEMU_TESTS:-}" ] || echo bench.overhead_pmu | grep -Eq "$DKPERF_QEMU_TESTS"; then
    printf '%s\n' "echo 1 >/proc/sys/kernel/perf_user_access; t bench.overhead_pmu 2 '' '' / \
$build/bench/overhead --case pmu --calls 1000; sed 's/^/   | /' /tmp/out; \
echo 0 >/proc/sys/kernel/perf_user_access" >>"$out/tests.sh"
fi

# The initramfs: busybox, bash, the target's glibc and C++ runtime, the
# build tree's programs and libraries and the sources' test scripts
# (tests/, bench/*.sh) at their host paths.
step "initramfs"
root=$out/rootfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib/aarch64-linux-gnu,proc,sys,dev,tmp,qemu}
cp "$cache/root/bin/busybox" "$root/bin/"
cp "$cache/root/bin/bash" "$root/bin/"
cp -a "$cache"/root/lib/aarch64-linux-gnu/libtinfo.so.6* "$root/lib/aarch64-linux-gnu/"
sysroot=/usr/aarch64-linux-gnu/lib
for l in ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libgcc_s.so.1 libpthread.so.0 libdl.so.2 \
         librt.so.1 libresolv.so.2; do
    [ -e "$sysroot/$l" ] && cp -L "$sysroot/$l" "$root/lib/aarch64-linux-gnu/"
done
ln -s aarch64-linux-gnu/ld-linux-aarch64.so.1 "$root/lib/ld-linux-aarch64.so.1"
# Programs and libraries of the build (stripped), the simulated roots.
(cd "$build" && find . -type f \( -perm -u+x -o -name '*.so*' -o -path '*sim-root*' \) \
     ! -path '*/CMakeFiles/*' -print0 |
     while IFS= read -r -d '' f; do
         case $(head -c 4 "$f" | od -An -c | tr -d ' ') in
             '177ELF') mkdir -p "$root$build/$(dirname "$f")"
                       aarch64-linux-gnu-strip -o "$root$build/$f" "$f" 2>/dev/null ||
                           cp "$f" "$root$build/$f" ;;
         esac
     done)
(cd "$build" && find . -type l ! -path '*/CMakeFiles/*' -print0 |
     while IFS= read -r -d '' f; do mkdir -p "$root$build/$(dirname "$f")"; cp -a "$f" "$root$build/$f"; done)
# The shared libraries those need beyond glibc (the C++ runtime, google
# benchmark), from the cross sysroot or Debian's arm64 multiarch folder,
# and theirs. Copied, not linked statically: Debian ships no static
# libbenchmark (libbenchmark-dev has only libbenchmark.so and
# libbenchmark_main.a).
needed() { find "$@" -type f -print0 | xargs -0 aarch64-linux-gnu-readelf -d 2>/dev/null |
               sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u; }
for pass in build libs; do
    if [ $pass = build ]; then libs=$(needed "$root$build"); else libs=$(needed "$root/lib"); fi
    for l in $libs; do
        [ -e "$root/lib/aarch64-linux-gnu/$l" ] && continue
        for d in "$sysroot" /usr/lib/aarch64-linux-gnu; do
            [ -e "$d/$l" ] && { cp -L "$d/$l" "$root/lib/aarch64-linux-gnu/"; break; }
        done
    done
done
mkdir -p "$root$src/bench"
while IFS= read -r d; do [ -n "$d" ] && mkdir -p "$root$d"; done <"$out/tests.sh.tmpdirs"
cp -a "$src/tests" "$root$src/"
cp -a "$src"/bench/*.sh "$root$src/bench/"
# One shard of the list per guest, guests side by side (one per core):
# -icount keeps each guest on one host thread, and per-thread exactness
# needs -smp 1, so parallel guests are the way to use the second core.
shards=${DKPERF_QEMU_SHARDS:-$(nproc)}
[ "$shards" -ge 1 ] || shards=1
rm -f "$out"/tests.[0-9]*.sh
awk -v n="$shards" -v dir="$out" 'NF { print > (dir "/tests." ((NR - 1) % n) ".sh") }' "$out/tests.sh"
for k in $(seq 0 $((shards - 1))); do
    touch "$out/tests.$k.sh"
done
cp "$out"/tests.[0-9]*.sh "$src/tests/qemu/init.sh" "$root/qemu/"
ln -s qemu/init.sh "$root/init"
chmod +x "$root/qemu/init.sh"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.gz"
echo "initramfs: $(du -h "$out/initrd.gz" | cut -f1)"

# Boot. /init powers the machine off when done; -no-reboot makes a panic an
# exit too, and the timeout bounds everything else.
step "boot ($shards guests side by side, timeout ${guest_timeout}s)"
pids=()
for k in $(seq 0 $((shards - 1))); do
    args=(-M virt -cpu max,pauth-impdef=on -smp 1 -m 1536 -nographic -nic none -no-reboot
          -icount shift=0 -kernel "$cache/Image-$kpkg" -initrd "$out/initrd.gz"
          -append "console=ttyAMA0 panic=-1 quiet dkshard=$k")
    [ "$k" = 0 ] && echo "qemu-system-aarch64 ${args[*]}"
    timeout -k 10 "$guest_timeout" qemu-system-aarch64 "${args[@]}" </dev/null \
        >"$out/guest.$k.log" 2>&1 &
    pids+=($!)
done
qrc=0
for pid in "${pids[@]}"; do
    wait "$pid" || qrc=$?
done
for k in $(seq 0 $((shards - 1))); do
    tr -d '\r' <"$out/guest.$k.log"
done >"$out/guest.txt"
cat "$out"/guest.[0-9]*.log >"$out/guest.log"

step "verdict"
grep -E '^@@ (FAIL|SKIP)' "$out/guest.txt" | sed 's/^@@ /  /' || true
pass=$(grep -c '^@@ PASS' "$out/guest.txt" || true)
fail=$(grep -c '^@@ FAIL' "$out/guest.txt" || true)
skip=$(grep -c '^@@ SKIP' "$out/guest.txt" || true)
want=$(grep -c . "$out/tests.sh")
ok=1
if [ "$(grep -c '^@@ END' "$out/guest.txt")" -ne "$shards" ]; then
    echo "qemu-arm64: a guest did not finish (qemu status $qrc); see $out/guest.log"
    tail -20 "$out/guest.txt"
    ok=0
fi
if [ $((pass + fail + skip)) -ne "$want" ]; then
    echo "qemu-arm64: $want tests listed, $((pass + fail + skip)) reported"
    ok=0
fi
[ "$fail" -eq 0 ] || ok=0
echo "log: $out/guest.log"
echo "qemu-arm64: $pass passed, $fail failed, $skip skipped ($(( $(date +%s) - t0 ))s)"
[ $ok = 1 ]
