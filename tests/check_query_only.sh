#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf info and dkperf list read and never change machine state: with
# every kpc_force_all_ctrs_set failing they still print the privileged
# kperf output, and the simulated machine state (DKPERF_SIM_STATE) still
# says force_all_ctrs 0 afterwards. Counters another client holds are
# reported as such, still without touching them.
#   check_query_only.sh DKPERF SIM_ROOT
set -u
dkperf=$1 root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

export DKPERF_FRAMEWORK_ROOT=$root DKPERF_SIM_CPU=as4
for cmd in info list; do
    state=$work/state-$cmd
    rm -f "$state"
    DKPERF_SIM_STATE=$state DKPERF_SIM_FORCE_ALL=0 "$dkperf" $cmd >"$work/plain" 2>&1 ||
        fail "dkperf $cmd failed: $(cat "$work/plain")"
    [ -f "$state" ] || fail "dkperf $cmd: the simulation wrote no state file"
    grep -qx 'force_all_ctrs 0' "$state" || fail "dkperf $cmd changed force_all_ctrs: $(cat "$state")"
    grep -qx 'counting 0x0' "$state" || fail "dkperf $cmd left counting on: $(cat "$state")"

    # Every set fails: a command that called it would fall back or fail.
    DKPERF_SIM_STATE=$state DKPERF_SIM_FAIL=kpc_force_all_ctrs_set:5 "$dkperf" $cmd \
        >"$work/refused" 2>&1 || fail "dkperf $cmd failed when kpc_force_all_ctrs_set fails: $(cat "$work/refused")"
    cmp -s "$work/plain" "$work/refused" ||
        fail "dkperf $cmd prints something else when kpc_force_all_ctrs_set fails: $(diff "$work/plain" "$work/refused")"
    grep -qx 'force_all_ctrs 0' "$state" || fail "dkperf $cmd changed force_all_ctrs: $(cat "$state")"
done
"$dkperf" info 2>&1 | grep -q 'kperf' || fail "dkperf info does not name the kperf backend"

# Counters held by another client (force_all_ctrs already 1, or the
# simulation's busy machine): info says so without taking them, and the
# machine state is left as it was.
busy='the counters are held by another client (force_all_ctrs is 1)'
state=$work/state-held
printf 'force_all_ctrs 1\n' >"$state"
DKPERF_SIM_STATE=$state "$dkperf" info >"$work/held" 2>&1 || fail "dkperf info failed: $(cat "$work/held")"
grep -q "^why .*$busy" "$work/held" || fail "dkperf info with force_all_ctrs 1 does not say the counters are held: $(cat "$work/held")"
grep -q '^backend *kperf' "$work/held" && fail "dkperf info with force_all_ctrs 1 still offers kperf: $(cat "$work/held")"
grep -qx 'force_all_ctrs 1' "$state" || fail "dkperf info changed force_all_ctrs: $(cat "$state")"
grep -qx 'counting 0x0' "$state" || fail "dkperf info left counting on: $(cat "$state")"
state=$work/state-busy
rm -f "$state"
DKPERF_SIM_STATE=$state DKPERF_SIM_BUSY=1 "$dkperf" info >"$work/busy" 2>&1 || fail "dkperf info failed: $(cat "$work/busy")"
grep -q "^why .*$busy" "$work/busy" || fail "DKPERF_SIM_BUSY=1 dkperf info does not say the counters are held: $(cat "$work/busy")"
grep -qx 'force_all_ctrs 0' "$state" || fail "dkperf info changed force_all_ctrs: $(cat "$state")"
DKPERF_SIM_BUSY=1 "$dkperf" info --backend kperf >"$work/busy" 2>&1 && fail "dkperf info --backend kperf succeeds on held counters"
grep -q "$busy" "$work/busy" || fail "dkperf info --backend kperf does not say the counters are held: $(cat "$work/busy")"

# kperf passed over for another reason than privileges (no event table for
# the CPU, no event database, busy counters): the privileges line does not
# say "not root".
for env in DKPERF_SIM_CPU=a13 DKPERF_SIM_FAIL=kpep_db_create:3 DKPERF_SIM_BUSY=1; do
    env "$env" "$dkperf" info >"$work/info" 2>&1 || fail "$env dkperf info failed: $(cat "$work/info")"
    grep -q '^why ' "$work/info" || fail "$env dkperf info gives no why: $(cat "$work/info")"
    grep -q '^privileges .*not root' "$work/info" &&
        fail "$env dkperf info blames privileges: $(cat "$work/info")"
    grep -q '^privileges .*thread_selfcounts' "$work/info" ||
        fail "$env dkperf info does not say what selfcounts counts: $(cat "$work/info")"
done
DKPERF_SIM_PRIVILEGED=0 "$dkperf" info 2>&1 | grep -q '^privileges .*not root' ||
    fail "DKPERF_SIM_PRIVILEGED=0 dkperf info does not say not root"
echo ok
