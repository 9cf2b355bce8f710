#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness_cost.sh - what the cluster suites' harness costs per call, not a
# test: the time of on_node, of the restore after a test, of vc_bounded and
# of the runner itself around a test that does nothing, each the mean of
# COUNT calls (default 10).  Run on node 0 of a 3-node vcluster from the
# repository root (Documentation/testing.rst, "Steps"):
#
#   tools/vcluster/vcluster run -n 3 --on 0 -- selftests/sdsm/harness_cost.sh
#
# Under TCG every exec and fork costs a tenth of a second and more; these
# are the figures to watch when the harness changes.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
NODE_SH=$HERE/sdsm_node.sh
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || { echo "VCLUSTER_LIB not set"; exit 1; }
# shellcheck source=selftests/sdsm/tap_runner.sh
. "$HERE/tap_runner.sh" || exit 1
: "${SDSM_TEST_TIMEOUT:=400}"
COUNT=${COUNT:-10}
if [ "$SDSM_NR_NODES" -lt 2 ]; then
	echo "needs 2 nodes or more"
	exit 1
fi

# cost CMD...: the mean time of COUNT runs of CMD, output dropped.
cost() {
	local i t0
	t0=$(vc_now_ms)
	for ((i = 0; i < COUNT; i++)); do
		"$@" > /dev/null 2>&1
	done
	printf '%6d ms  %s\n' $(( ($(vc_now_ms) - t0) / COUNT )) "$*"
}

test_nothing() {
	:
}

# runner_cost: run_tap_tests of COUNT tests that do nothing, a test each.
runner_cost() {
	local i t0
	local -a names=()
	for ((i = 0; i < COUNT; i++)); do
		names+=(nothing)
	done
	t0=$(vc_now_ms)
	run_tap_tests "${names[@]}" > /dev/null
	printf '%6d ms  %s\n' $(( ($(vc_now_ms) - t0) / COUNT )) \
		"run_tap_tests, a test that does nothing ($1)"
}

echo "# $COUNT calls each, node $SDSM_NODE_ID of $SDSM_NR_NODES"
cost on_node 1 true
cost on_node 1 sdsm_ready
cost on_node 1 "$NODE_SH" wait_all_up 90
cost "$NODE_SH" wait_all_up 90
cost par_on_nodes "$NODE_SH" restore_up 90
cost cluster_ready
cost restore_nodes
cost vc_bounded 400 true
restore_cluster() {
	restore_nodes
}
runner_cost "restore_nodes"
restore_cluster() {
	:
}
runner_cost "no restore"
