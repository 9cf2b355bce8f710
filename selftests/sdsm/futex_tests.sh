#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# futex_tests.sh - the distributed futex (SDSM_IOC_FUTEX) on a vcluster.
# Run on node 0 of a cluster of 3 nodes from the repository root:
#
#   make module selftests
#   tools/vcluster/vcluster run -n 3 --on 0 --timeout 900 -- \
#	selftests/sdsm/futex_tests.sh [TEST...]
#
# Prints one TAP stream and exits 1 if any test failed.  Each test runs
# under a bound (SDSM_TEST_TIMEOUT, default 300 s) and the cluster is
# restored after it, as in sync_tests.sh (whose runner this copies).  "Node
# dies" is its eth0 taken down.  FUTEX_STRESS_PAIRS (default 10000) and
# FUTEX_STRESS_RINGS (default 3) set the size of the stress test, which
# has a bound of its own, SDSM_STRESS_TIMEOUT (default 360 s).

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
NODE_SH=$HERE/sdsm_node.sh
FT=$HERE/futex_test
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || { echo "Bail out! VCLUSTER_LIB not set"; exit 1; }
# shellcheck source=selftests/sdsm/tap_runner.sh
. "$HERE/tap_runner.sh" || { echo "Bail out! tap_runner.sh"; exit 1; }

: "${SDSM_TEST_TIMEOUT:=300}"
: "${SDSM_STRESS_TIMEOUT:=360}"
: "${FUTEX_STRESS_PAIRS:=10000}"
: "${FUTEX_STRESS_RINGS:=3}"
N=$SDSM_NR_NODES
LAST=$((N - 1))
DOWN_SEC=40
WORK=$SDSM_SHARED/futex-tests.$$
TEST=""

ALL_TESTS="kselftest pingpong stress manager_dies waiter_node_dies
rmmod_manager"

# node_dies K: node K's eth0 goes down.  The restore after the test then
# reloads the module everywhere: the nodes that lost each other keep
# failing their pages homed across the cut (EFAULT for a futex word) until
# a reload (ci122 and ci123: waiter_node_dies's waiter on the node that
# manager_dies had cut off failed at once with EFAULT).
node_dies() {
	: > "$WORK/node-died"
	log "node $1: eth0 down"
	run_on "$1" ip link set eth0 down
}

# An offset of the default region whose page is homed at node $1.
word_homed_at() {
	local off
	off=$("$FT" pick "$1" "$((RANDOM % 16))") || return 1
	echo $((off + 4 * (RANDOM % 1024)))
}

# ------------------------------------------------------------------ tests

# The C kselftests of SDSM_IOC_FUTEX on every node, all at once.
test_kselftest() {
	kselftest_on_nodes "$FT" at_once
}

# rings R M TURNS [HOME]: R token rings at once, each of M members on
# nodes 0..M-1 (member i of ring r on node (i + r) % M) through a word of
# its own homed at node HOME (default r % N); TURNS per member; every wait
# bounded by 20 s.
rings() {
	local r=$1 m=$2 turns=$3 off i j h rc=0 names='' t0
	t0=$(date +%s%N)
	for ((j = 0; j < r; j++)); do
		h=${4:-$((j % N))}
		off=$(word_homed_at "$h") || { log "no page homed at $h"; return 1; }
		"$FT" set "$off" 0
		log "ring $j of $m, $turns turns each, word at offset $off (home: node $("$FT" home "$off"))"
		for ((i = 0; i < m; i++)); do
			bg "ring.$j.$i" $(((i + j) % m)) "$FT" ring "$off" "$i" \
				"$m" "$turns" 20000
			names="$names ring.$j.$i"
		done
	done
	# shellcheck disable=SC2086
	wait_bg $(($(bound "$TEST") - 20)) $names || rc=1
	for i in $names; do
		expect "$i" 0 || rc=1
	done
	log "$((r * m * turns)) wait/wake pairs in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	return $rc
}

# Cross-node ping-pong: nodes 0 and 1 through a word homed at the third.
test_pingpong() {
	rings 1 2 300 "$LAST"
}

# FUTEX_STRESS_PAIRS wait/wake pairs over 3 nodes in FUTEX_STRESS_RINGS
# rings at once, no lost wake-up.
test_stress() {
	local r=$FUTEX_STRESS_RINGS
	rings "$r" "$N" $(( (FUTEX_STRESS_PAIRS + r * N - 1) / (r * N) ))
}

# The manager (the word's home) dies: its waiters on the other nodes get
# EHOSTDOWN in bounded time.
test_manager_dies() {
	local rc=0 off
	off=$(word_homed_at "$LAST") || return 1
	"$FT" set "$off" 5 || return 1
	manager_count "$LAST" manager_futex_queued || return 1
	bg w0 0 "$FT" wait "$off" 5 0
	bg w1 1 "$FT" wait "$off" 5 0
	manager_queued "$LAST" manager_futex_queued 2 || return 1
	if finished w0 || finished w1; then
		log "a waiter did not wait"
		return 1
	fi
	node_dies "$LAST"
	wait_bg "$DOWN_SEC" w0 w1 || rc=1
	expect w0 EHOSTDOWN || rc=1
	expect w1 EHOSTDOWN || rc=1
	return $rc
}

# A waiter's node dies: the manager drops it, so a WAKE of 1 wakes the
# next waiter (FIFO would pick the dead one first otherwise).
test_waiter_node_dies() {
	local rc=0 off k r
	off=$(word_homed_at 0) || return 1
	"$FT" set "$off" 9 || return 1
	# Both waiters' nodes can read the word (a wait for another value
	# returns EAGAIN at once), rather than a waiter failing unseen.
	for k in "$LAST" 1; do
		r=$(run_on "$k" "$FT" wait "$off" 8 0 | grep -o 'result=[A-Z0-9]*')
		[ "$r" = result=EAGAIN ] ||
			{ log "node $k cannot wait on the word: ${r:-no result}"; return 1; }
	done
	manager_count 0 manager_futex_queued || return 1
	bg dead "$LAST" "$FT" wait "$off" 9 0
	manager_queued 0 manager_futex_queued 1 ||
		{ log "dead: $(cat "$WORK/dead.out" 2>/dev/null)"; return 1; }
	bg live 1 "$FT" wait "$off" 9 60000
	manager_queued 0 manager_futex_queued 2 || return 1
	node_dies "$LAST"
	run_on 0 "$NODE_SH" wait_not_up "$LAST" "$DOWN_SEC" || rc=1
	bg wake 0 "$FT" wake "$off" 1
	wait_bg 30 wake live || rc=1
	expect wake 0 || rc=1
	grep -q '^woken=1$' "$WORK/wake.out" || { log "wake did not wake 1"; rc=1; }
	expect live 0 || rc=1
	return $rc
}

# rmmod of a word's home (node 1) while a waiter on node 0 waits there and
# a waiter on node 1 itself was killed mid-wait: the remote waiter gets
# EHOSTDOWN, and node 1 frees every futex object (no "leaked" line).
test_rmmod_manager() {
	local rc=0 off mark=futex-rmmod.$$ pid
	off=$(word_homed_at 1) || return 1
	"$FT" set "$off" 3 || return 1
	run_on 1 "$NODE_SH" mark "$mark"
	manager_count 1 manager_futex_queued || return 1
	bg remote 0 "$FT" wait "$off" 3 0
	bg local 1 "$FT" wait "$off" 3 0
	manager_queued 1 manager_futex_queued 2 || return 1
	pid=$(sed -n 's/^waiting pid=\([0-9]*\)$/\1/p' "$WORK/local.out")
	if [ -z "$pid" ] || finished local || finished remote; then
		log "the waiters did not wait"
		return 1
	fi
	run_on 1 kill -9 "$pid"
	wait_bg 30 local || rc=1
	run_on 1 "$NODE_SH" unload 60 || rc=1
	wait_bg "$DOWN_SEC" remote || rc=1
	expect remote EHOSTDOWN || rc=1
	if run_on 1 "$NODE_SH" dmesg_since "$mark" | grep -E 'leaked|WARNING'; then
		log "node 1 leaked or warned"
		rc=1
	fi
	return $rc
}

# ------------------------------------------------------------------ runner

# bound TEST: seconds TEST may run.
bound() {
	if [ "$1" = stress ]; then
		echo "$SDSM_STRESS_TIMEOUT"
	else
		echo "$SDSM_TEST_TIMEOUT"
	fi
}

# After a test that took a node down (node_dies), the module reloaded
# everywhere; else the usual restore.  Leftover processes of a failed
# test would hold the device open: killed first.
restore_cluster() {
	if [ -e "$WORK/node-died" ]; then
		par_on_nodes vc_pkill futex_test
		restore_nodes && reload_all
	else
		restore_nodes
	fi
}

tap_before_test() {
	rm -rf "$WORK"
	mkdir -p "$WORK"
	TEST=$1
}

tap_test_bound() {
	bound "$1"
}

tests=${*:-$ALL_TESTS}
if [ "$N" -lt 3 ]; then
	# shellcheck disable=SC2086
	tap_skip_all "needs 3 nodes" $tests
	exit 0
fi
# shellcheck disable=SC2086
run_tap_tests $tests
rc=$?
rm -rf "$WORK"
exit $rc
