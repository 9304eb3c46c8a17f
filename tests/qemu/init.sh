#!/bin/busybox sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# /init of the QEMU guest (tests/qemu/run.sh): mount what the tests need,
# run its shard /qemu/tests.K.sh (dkshard=K on the kernel command line), print one "@@ PASS|FAIL|SKIP name" line per test and
# "@@ END", power off.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp TMPDIR=/tmp
# QEMU -icount counts instructions exactly: tests/test_pmu.c asserts exact counts.
export DKPERF_EXACT_PMU=1
mount -t proc proc /proc
# Exact counts need the same addresses each run: with address-space
# randomisation the start-up code of a program (stack and string
# alignment) retires a few instructions more or less from run to run.
echo 0 >/proc/sys/kernel/randomize_va_space
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# The initramfs is already in RAM and writable; a tmpfs on /tmp would hide
# a build tree packed at its host path under /tmp (a CI clone there).
mkdir -p /tmp && chmod 1777 /tmp
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
ln -sf /bin/bash /usr/bin/bash
exec </dev/console >/dev/console 2>&1

echo "@@ GUEST $(uname -r) $(uname -m)"
echo "@@ PMU $(dmesg | grep -o 'hw perfevents: .*' | head -1)"
echo "@@ perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"

# t NAME SKIP_RC PASS_RE FAIL_RE DIR VAR=value... COMMAND ARGS...
t() {
    name=$1 skiprc=$2 passre=$3 failre=$4 dir=$5
    shift 5
    start=$(cut -d' ' -f1 /proc/uptime)
    (cd "$dir" && exec timeout 120 env "$@") >/tmp/out 2>&1 </dev/null
    rc=$?
    secs=$(awk -v a="$start" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')
    verdict=PASS
    if [ -n "$failre" ] && grep -Eq "$failre" /tmp/out; then
        verdict=FAIL
    elif [ -n "$skiprc" ] && [ "$rc" = "$skiprc" ]; then
        verdict=SKIP
    elif [ -n "$passre" ]; then
        grep -Eq "$passre" /tmp/out || verdict=FAIL
    elif [ "$rc" != 0 ]; then
        verdict=FAIL
    fi
    case $verdict in
        PASS) echo "@@ PASS $name (${secs}s)" ;;
        SKIP) echo "@@ SKIP $name: $(grep -iE 'skip' /tmp/out | tail -1)" ;;
        FAIL) echo "@@ FAIL $name (status $rc, ${secs}s)"
              tail -40 /tmp/out | sed 's/^/   | /' ;;
    esac
}
# s NAME REASON
s() { echo "@@ SKIP $1: not run in the guest: $2"; }

# This guest's shard of the list (run.sh boots one guest per shard).
shard=$(sed -n 's/.*dkshard=\([0-9]*\).*/\1/p' /proc/cmdline)
. "/qemu/tests.${shard:-0}.sh"
echo "@@ END"
sync
poweroff -f
