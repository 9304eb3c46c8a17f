#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# When the counters cannot be given back (simulated: the second
# kpc_force_all_ctrs_set fails with EIO), dkperf says what is left behind
# and how to restore it, and exits non-zero; stat still prints its report.
# info and list may not take the counters at all: then there is nothing to
# give back, and they must succeed.
# usage: check_release.sh DKPERF SIM_ROOT
set -u
dkperf=$1 sim_root=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DKPERF_FRAMEWORK_ROOT=$sim_root DKPERF_SIM_STATE=$tmp/state

run() { # run EXPECT_REPORT FAIL_SPEC ARGS...: sets status, err, state
    local report=$1 spec=$2
    shift 2
    printf 'force_all_ctrs 0\n' >"$tmp/state"
    DKPERF_SIM_FAIL=$spec "$dkperf" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    err=$(cat "$tmp/err")
    state=$(sed -n 's/^force_all_ctrs //p' "$tmp/state")
}

for args in "stat -a -e instructions -- true" "stat -e instructions -- true" "info" "list"; do
    # shellcheck disable=SC2086
    run 0 kpc_force_all_ctrs_set:5@2 $args
    if [ "$state" = 1 ]; then
        [ $status -ne 0 ] || { echo "$err"; fail "dkperf $args left force_all_ctrs at 1 and exited 0"; }
        grep -q "not given back" <<<"$err" || { echo "$err"; fail "dkperf $args: no message"; }
        grep -q "sudo sysctl kpc.force_all_ctrs=0" <<<"$err" ||
            { echo "$err"; fail "dkperf $args: the message does not say how to restore"; }
        [ "$(grep -o "restore it with" <<<"$err" | wc -l)" = 1 ] ||
            { echo "$err"; fail "dkperf $args: the advice is given more than once"; }
        [ "$(grep -c "not given back" <<<"$err")" = 1 ] || { echo "$err"; fail "dkperf $args: said it more than once"; }
        case $args in stat*)
            grep -q "Performance counter stats for 'true'" <<<"$err" ||
                { echo "$err"; fail "dkperf $args: no report"; } ;;
        esac
    else
        [ "$state" = 0 ] || fail "dkperf $args: state file says force_all_ctrs '$state'"
        [ $status -eq 0 ] || { echo "$err"; fail "dkperf $args took nothing and exited $status"; }
    fi
    # Without the fault: exit 0, everything given back, nothing said about it.
    run 0 "" $args
    [ $status -eq 0 ] || { echo "$err"; fail "dkperf $args exited $status without a fault"; }
    [ "$state" = 0 ] || fail "dkperf $args left force_all_ctrs at $state without a fault"
    grep -q "not given back" <<<"$err" && fail "dkperf $args complained without a fault"
done
# force_all_ctrs already 1 before dkperf: giving the counters back leaves
# it 1, as it was, so nothing is left behind and nothing is said.
for args in "stat -a -e instructions -x, -- true" "stat -e instructions -- true"; do
    printf 'force_all_ctrs 1\n' >"$tmp/state"
    # shellcheck disable=SC2086
    DKPERF_SIM_FAIL=kpc_force_all_ctrs_set:5@2 "$dkperf" $args >"$tmp/out" 2>"$tmp/err"
    status=$?
    err=$(cat "$tmp/err")
    state=$(sed -n 's/^force_all_ctrs //p' "$tmp/state")
    [ "$state" = 1 ] || fail "dkperf $args: force_all_ctrs was 1 and is now '$state'"
    [ $status -eq 0 ] || { echo "$err"; fail "dkperf $args exited $status with force_all_ctrs as it was"; }
    grep -Eq "not given back|sysctl" <<<"$err" && { echo "$err"; fail "dkperf $args: alarm about force_all_ctrs it left as it was"; }
done
echo "a failed hand-back of the counters is reported and fails dkperf"
