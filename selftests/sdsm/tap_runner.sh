# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The test runner of the cluster suites (run_cluster_tests.sh,
# sync_tests.sh), sourced by them.  run_tap_tests NAME... runs the shell
# function test_NAME of each, bounded by SDSM_TEST_TIMEOUT, then the
# suite's restore_cluster, and prints one TAP 13 stream with a plan.  A
# test's output is printed behind '#'.  Status 0 passes; 77 is a SKIP whose
# reason is the test's last line (a test returns 77 only for something
# missing by design, such as too few nodes, never because a helper failed);
# anything else fails, and so does a cluster that cannot be restored.  A
# suite may define tap_before_test NAME (run before each test, not timed)
# and tap_test_bound NAME (the seconds NAME may run, default
# SDSM_TEST_TIMEOUT).
# Exits with status 1 if any test failed.

tap_now_ms() {
	echo $(( $(date +%s%N) / 1000000 ))
}

run_tap_tests() {
	local i=0 failed=0 out t t0 rc b
	echo "TAP version 13"
	echo "1..$#"
	out=$(mktemp /tmp/sdsm-test.XXXXXX)
	for t in "$@"; do
		i=$((i + 1))
		if ! declare -F "test_$t" >/dev/null; then
			echo "not ok $i $t # no such test"
			failed=$((failed + 1))
			continue
		fi
		! declare -F tap_before_test >/dev/null || tap_before_test "$t"
		b=$SDSM_TEST_TIMEOUT
		! declare -F tap_test_bound >/dev/null || b=$(tap_test_bound "$t")
		t0=$(tap_now_ms)
		vc_bounded "$b" "test_$t" > "$out" 2>&1
		rc=$?
		[ $rc = 124 ] && echo "test timed out after ${b}s" >> "$out"
		if ! vc_bounded "$SDSM_TEST_TIMEOUT" restore_cluster \
				>> "$out" 2>&1; then
			echo "cannot restore the cluster after the test" >> "$out"
			rc=1
		fi
		sed 's/^/# /' "$out"
		echo "# $t: $(( $(tap_now_ms) - t0 )) ms including restore"
		if [ $rc = 0 ]; then
			echo "ok $i $t"
		elif [ $rc = 77 ]; then
			echo "ok $i $t # SKIP $(grep . "$out" | tail -n 1)"
		else
			echo "not ok $i $t"
			failed=$((failed + 1))
		fi
	done
	rm -f "$out"
	echo "# $failed of $# failed"
	[ $failed = 0 ]
}
