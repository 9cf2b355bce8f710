#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sync_tests.sh - cluster locks and barriers on a vcluster.  Run on node 0
# of a cluster of 3 or more nodes from the repository root:
#
#   make module selftests
#   tools/vcluster/vcluster run -n 3 --on 0 --timeout 1800 -- \
#	selftests/sdsm/sync_tests.sh [TEST...]
#
# Prints one TAP stream (TAP version 13) and exits 1 if any test failed.
# Each test runs under a bound (SDSM_TEST_TIMEOUT, default 240 s); its
# output is shown as "# " comment lines.  After every test the cluster is
# restored (eth0 up, rxe0 present, sdsm loaded, every node sees every other
# up).  A test that returns 77 is reported as SKIP with its last line.
# "Node dies" is simulated by taking its eth0 down: its peers see it DOWN
# after peer_timeout_ms.  No test asserts a duration; waits are bounded.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
NODE_SH=$HERE/sdsm_node.sh
SYNC=$HERE/sync_test
COND=$(cd "$HERE/../.." && pwd -P)/userlib/build/cond_prog
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || { echo "Bail out! VCLUSTER_LIB not set"; exit 1; }
# shellcheck source=selftests/sdsm/tap_runner.sh
. "$HERE/tap_runner.sh" || { echo "Bail out! tap_runner.sh"; exit 1; }

: "${SDSM_TEST_TIMEOUT:=240}"
N=$SDSM_NR_NODES
LAST=$((N - 1))
# Peer silence before "down" is 3 s by default; allow generous slack.
DOWN_SEC=40
UP_SEC=90
WORK=$SDSM_SHARED/sync-tests.$$

ALL_TESTS="kselftest mutual_exclusion shared_counter barrier_phases
condvar_queue condvar_queue_release holder_dies lock_manager_dies barrier_member_dies barrier_manager_dies
rmmod_with_waiters holder_power_cut"

# A fresh id (decimal) whose lock or barrier manager is node $2.
id_managed_by() {
	local kind=$1 want=$2 id
	id=$(( (RANDOM << 20) + (RANDOM << 5) + 1000 ))
	while [ "$("$SYNC" manager "$kind" "$id")" != "$want" ]; do
		id=$((id + 1))
	done
	echo "$id"
}

held_pid() {
	sed -n 's/^held pid=\([0-9]*\)$/\1/p' "$WORK/$1.out" 2>/dev/null
}

waiting_pid() {
	sed -n 's/^waiting pid=\([0-9]*\)$/\1/p' "$WORK/$1.out" 2>/dev/null
}

is_held() {
	[ -n "$(held_pid "$1")" ]
}

node_dies() {
	log "node $1: eth0 down"
	run_on "$1" ip link set eth0 down
}

# ------------------------------------------------------------------ tests

# The C kselftests of SDSM_IOC_LOCK / SDSM_IOC_BARRIER, on every node at
# once.
test_kselftest() {
	kselftest_on_nodes "$SYNC" at_once
}

# Two processes per node take one cluster lock 15 times each; inside, a
# file in the shared directory is created with O_EXCL (so two holders at
# once are caught) and a counter file is read, incremented and written.
# Lost updates or an overlap fail the test.
test_mutual_exclusion() {
	local k p rc=0 iters=15 id=$((RANDOM + 77000)) want got names=
	echo 0 > "$WORK/counter"
	for k in $(nodes); do
		for p in 1 2; do
			bg "mx.$k.$p" "$k" "$SYNC" lockloop "$id" "$iters" \
				"$WORK/counter" "$WORK/owner"
			names="$names mx.$k.$p"
		done
	done
	# shellcheck disable=SC2086
	wait_bg 200 $names || rc=1
	for p in $names; do
		expect "$p" 0 || rc=1
	done
	want=$((N * 2 * iters))
	got=$(cat "$WORK/counter")
	log "counter: $got, want $want (lock manager: node $("$SYNC" manager lock "$id"))"
	[ "$got" = "$want" ] || rc=1
	return $rc
}

# The same over coherent memory: a u64 in the default region (mmap offset
# 0 of /dev/sdsm) incremented under the lock by two processes per node.
test_shared_counter() {
	local k p rc=0 iters=20 id=$((RANDOM + 99000)) off before after names=
	# Exit 2: the module lacks coherent memory (a SKIP).  Any other
	# failure of the helper fails the test: it must never become a skip.
	before=$("$SYNC" memread 0 2>&1)
	case $? in
	0) ;;
	2) log "$before"; log "coherent memory not available"; return 77 ;;
	*) log "sync_test memread failed: $before"; return 1 ;;
	esac
	# At 40 MiB into the default region: mem_tests.sh uses 0-36 MiB (fio
	# leaves random data there, beyond what shell arithmetic can add to).
	off=$(( (40 << 20) + (RANDOM % 16) * 4096 + 64 ))
	before=$("$SYNC" memread "$off") || return 1
	for k in $(nodes); do
		for p in 1 2; do
			bg "mem.$k.$p" "$k" "$SYNC" memloop "$id" "$iters" "$off"
			names="$names mem.$k.$p"
		done
	done
	# shellcheck disable=SC2086
	wait_bg 200 $names || rc=1
	for p in $names; do
		expect "$p" 0 || rc=1
	done
	for k in $(nodes); do
		after=$(run_on "$k" "$SYNC" memread "$off")
		log "node $k reads $after at offset $off, was $before, want +$((N * 2 * iters))"
		[ "$after" = "$((before + N * 2 * iters))" ] || rc=1
	done
	return $rc
}

# Every node passes 6 barriers (mask and count 0: all nodes); before each,
# it drops a file for the phase; after it, every node's file must exist.
# Each phase has one serial arrival (SDSM_BARRIER_OUT_SERIAL), on any
# node: one serial.PHASE.NODE file per phase.
test_barrier_phases() {
	local k p n rc=0 id=$((RANDOM + 123000)) names=
	mkdir -p "$WORK/phases"
	for k in $(nodes); do
		bg "ph.$k" "$k" "$SYNC" barrier "$id" 6 "$WORK/phases" 120000
		names="$names ph.$k"
	done
	# shellcheck disable=SC2086
	wait_bg 200 $names || rc=1
	for k in $names; do
		expect "$k" 0 || rc=1
	done
	for p in 0 1 2 3 4 5; do
		n=$(find "$WORK/phases" -name "serial.$p.*" | wc -l)
		log "phase $p: $n serial arrival(s):" \
			"$(cd "$WORK/phases" && echo serial."$p".*)"
		[ "$n" = 1 ] || rc=1
	done
	log "barrier manager: node $("$SYNC" manager barrier "$id")"
	return $rc
}

# A queue of 4 items in one page of the default region, on one cluster
# lock and two condition variables of libsdsm (cond_prog, linked with
# it): 2 producer threads on node 0 put 30 items each, 2 consumer threads
# on each other node take them.  Every item is taken once (count and sum
# exact); the producer starts only once a consumer sleeps on the empty
# queue, so a wake-up crosses nodes; a wait that times out (60 s: a lost
# wake-up) fails its program.  The
# threads of a process share its lock ids: before locks were owned by
# threads, the second thread's sdsm_lock() failed with EDEADLK.
test_condvar_queue() {
	condvar_queue ""
}

# The same with the queue's data in a release-consistent region (the
# condition variables stay in the default, sequential region): the lock's
# acquires and releases order it.
test_condvar_queue_release() {
	condvar_queue "condq-$RANDOM"
}

# queue_waited DATA OFF ID: cond_prog show (its line in queue_state)
# reports a wait that slept.
queue_waited() {
	queue_state=$(COND_DATA=$1 "$COND" show "$2" "$3") || return 1
	case $queue_state in
	*" waits "[1-9]*) return 0 ;;
	esac
	return 1
}

# condvar_queue DATA: the queue test, its data in region DATA if not "".
# Each producer thread puts 30 items; 10 on a kernel whose guests run
# slower (RUN_ALL_BOUND_SCALE above 1: the debug kernel, where 60 items
# took 127 s on 2026-12-02, about 2 s each): still several times the
# queue's length, so both conditions are waited on.
condvar_queue() {
	local k rc=0 per=30 total id=$((RANDOM + 88000)) off want got names=
	local data=$1
	[ "${RUN_ALL_BOUND_SCALE:-1}" -gt 1 ] && per=10
	[ -x "$COND" ] || { log "$COND missing: make -C userlib"; return 1; }
	off=$(( (48 << 20) + (RANDOM % 16) * 4096 ))
	COND_DATA=$data "$COND" init "$off" || { log "cond_prog init failed"; return 1; }
	total=$((2 * per))
	want=$((2 * per * (per + 1) / 2 + per * 10000))
	for k in $(nodes); do
		[ "$k" = 0 ] && continue
		bg "cons.$k" "$k" env COND_DATA="$data" "$COND" consume "$off" \
			"$id" 2 "$total"
		names="$names cons.$k"
	done
	# The producer starts once a consumer sleeps on the empty queue, so
	# that a wake-up from another node is always part of the test (a
	# producer started first may never fill the queue nor find a
	# consumer waiting: "waits 0" was seen).
	queue_state=
	if ! wait_until 60 queue_waited "$data" "$off" "$id"; then
		log "no consumer slept on the empty queue: ${queue_state:-show failed}"
		rc=1
	fi
	bg prod 0 env COND_DATA="$data" "$COND" produce "$off" "$id" 2 "$per"
	# shellcheck disable=SC2086
	wait_bg 200 prod $names || rc=1
	for k in prod $names; do
		log "$k: exit $(cat "$WORK/$k.rc" 2>/dev/null): $(tr '\n' ' ' < "$WORK/$k.out")"
		[ "$(cat "$WORK/$k.rc" 2>/dev/null)" = 0 ] || rc=1
	done
	got=$(COND_DATA=$data "$COND" show "$off" "$id")
	log "queue: $got (want taken $total sum $want, waits > 0)"
	case $got in
	"taken $total sum $want waits "[1-9]*) ;;
	*) rc=1 ;;
	esac
	if [ -n "$data" ]; then
		COND_DATA=$data "$COND" destroy || rc=1
	fi
	return $rc
}

# holder_and_waiter ID [HOLDER WAITER]: node HOLDER (default $LAST) holds
# lock ID (job hold, its local pid in HOLD_PID) and node WAITER (default
# 1) waits for it (job wait), queued at the lock's manager.
holder_and_waiter() {
	local holder=${2:-$LAST} waiter=${3:-1} m
	m=$("$SYNC" manager lock "$1") || return 1
	bg hold "$holder" "$SYNC" hold "$1" 600
	HOLD_PID=$!
	wait_until 60 is_held hold || { log "holder never got the lock"; return 1; }
	manager_count "$m" manager_lock_queued || return 1
	bg wait "$waiter" "$SYNC" acquire "$1" 0
	manager_queued "$m" manager_lock_queued 1 || return 1
	if finished wait; then
		log "the waiter did not wait"
		return 1
	fi
}

# The holder of a lock dies: the manager (alive) recovers the lock and
# grants it to the waiter on another node.
test_holder_dies() {
	local rc=0 id
	id=$(id_managed_by lock 0)
	holder_and_waiter "$id" || return 1
	node_dies "$LAST"
	wait_bg "$DOWN_SEC" wait || rc=1
	expect wait 0 || rc=1
	run_on "$LAST" kill "$(held_pid hold)"
	return $rc
}

# The holder of a lock loses power (issue 14: vcluster kills its QEMU, so
# nothing is said to its peers): the manager (node 0) recovers the lock
# and grants it to the waiter on node $LAST.  The holder is node 1, a node
# in the middle (a lower id than node $LAST, a higher one than node 0),
# where mem_power_cut cuts node $LAST.  The node then boots again and
# loads sdsm while the others keep theirs; every node sees every other up,
# and the lock goes to the rebooted node when it asks.
test_holder_power_cut() {
	local rc=0 id k v=1
	id=$(id_managed_by lock 0)
	holder_and_waiter "$id" "$v" "$LAST" || return 1
	log "node $v: power cut"
	power_cut "$v" || return 1
	kill "$HOLD_PID" 2>/dev/null	# its answer never comes
	wait_bg "$DOWN_SEC" wait || rc=1
	expect wait 0 || rc=1
	log "node $v: power on"
	power_on "$v" || return 1
	for k in $(seq 0 "$LAST"); do
		run_on "$k" "$NODE_SH" wait_all_up "$UP_SEC" || rc=1
	done
	bg take "$v" "$SYNC" acquire "$id" 30000
	wait_bg 60 take || rc=1
	expect take 0 || rc=1
	return $rc
}

# The manager of a lock dies: its waiter fails with EHOSTDOWN, and its
# holder's RELEASE answers EHOSTDOWN.
test_lock_manager_dies() {
	local rc=0 id
	id=$(id_managed_by lock "$LAST")
	bg hold 0 "$SYNC" hold "$id" "$DOWN_SEC"
	wait_until 60 is_held hold || { log "holder never got the lock"; return 1; }
	manager_count "$LAST" manager_lock_queued || return 1
	bg wait 1 "$SYNC" acquire "$id" 0
	manager_queued "$LAST" manager_lock_queued 1 || return 1
	node_dies "$LAST"
	wait_bg "$DOWN_SEC" wait || rc=1
	expect wait EHOSTDOWN || rc=1
	# The manager is gone for good: end the hold now, not in DOWN_SEC.
	if finished hold; then
		log "the hold ended before its RELEASE was due"
		rc=1
	fi
	run_on 0 "$NODE_SH" wait_not_up "$LAST" "$DOWN_SEC" || rc=1
	run_on 0 kill -USR1 "$(held_pid hold)"
	wait_bg 30 hold || rc=1
	expect hold EHOSTDOWN || rc=1
	return $rc
}

# barrier_node_dies MANAGER: nodes 0..LAST-1 wait at a barrier of every
# node managed by MANAGER; node LAST dies; every waiter gets EHOSTDOWN.
barrier_node_dies() {
	local k rc=0 id names=
	id=$(id_managed_by barrier "$1")
	manager_count "$1" manager_barrier_arrivals || return 1
	for k in $(seq 0 $((LAST - 1))); do
		bg "bar.$k" "$k" "$SYNC" barrier1 "$id" 0
		names="$names bar.$k"
	done
	manager_queued "$1" manager_barrier_arrivals "$LAST" || return 1
	for k in $names; do
		if finished "$k"; then
			log "$k: passed a barrier node $LAST never reached"
			cat "$WORK/$k.out"
			rc=1
		fi
	done
	node_dies "$LAST"
	# shellcheck disable=SC2086
	wait_bg "$DOWN_SEC" $names || rc=1
	for k in $names; do
		expect "$k" EHOSTDOWN || rc=1
	done
	return $rc
}

# A participant that is not the manager dies.
test_barrier_member_dies() {
	barrier_node_dies 0
}

# The barrier's manager itself dies.
test_barrier_manager_dies() {
	barrier_node_dies "$LAST"
}

# rmmod on a manager with a held lock, a waiter and barrier arrivals: all
# of them fail with EHOSTDOWN elsewhere.  Then rmmod on a node whose
# processes were killed while waiting and holding: it works and leaks
# nothing.
test_rmmod_with_waiters() {
	local rc=0 m=1 v=$LAST id bid id0 mark=rmmod.$$
	id=$(id_managed_by lock $m)
	bid=$(id_managed_by barrier $m)
	bg hold 0 "$SYNC" hold "$id" 600
	wait_until 60 is_held hold || { log "holder never got the lock"; return 1; }
	manager_count $m manager_lock_queued || return 1
	bg wait "$v" "$SYNC" acquire "$id" 0
	manager_queued $m manager_lock_queued 1 || return 1
	manager_count $m manager_barrier_arrivals || return 1
	bg bar.0 0 "$SYNC" barrier1 "$bid" 0
	bg bar.v "$v" "$SYNC" barrier1 "$bid" 0
	manager_queued $m manager_barrier_arrivals 2 || return 1
	run_on $m "$NODE_SH" unload 60 || rc=1
	wait_bg "$DOWN_SEC" wait bar.0 bar.v || rc=1
	expect wait EHOSTDOWN || rc=1
	expect bar.0 EHOSTDOWN || rc=1
	expect bar.v EHOSTDOWN || rc=1
	kill "$(held_pid hold)"

	# On node v: a holder and a waiter (lock managed by node 0) killed.
	run_on "$v" "$NODE_SH" mark "$mark"
	id0=$(id_managed_by lock 0)
	bg hold2 "$v" "$SYNC" hold "$id0" 600
	wait_until 60 is_held hold2 || { log "holder never got the lock"; return 1; }
	manager_count 0 manager_lock_queued || return 1
	bg wait2 "$v" "$SYNC" acquire "$id0" 0
	manager_queued 0 manager_lock_queued 1 || return 1
	run_on "$v" kill -9 "$(held_pid hold2)" "$(waiting_pid wait2)"
	wait_bg 60 hold2 wait2 || rc=1
	run_on "$v" "$NODE_SH" unload 60 || rc=1
	if run_on "$v" "$NODE_SH" dmesg_since "$mark" | grep 'leaked'; then
		log "node $v leaked"
		rc=1
	fi
	# Node 0 can take the lock node v held: it was released at close.
	bg take 0 "$SYNC" acquire "$id0" 30000
	wait_bg 60 take || rc=1
	expect take 0 || rc=1
	return $rc
}

# ------------------------------------------------------------------ runner

restore_cluster() {
	restore_nodes
}

# Every test needs 3 nodes: with fewer, each is a SKIP.
tap_before_test() {
	rm -rf "$WORK"
	mkdir -p "$WORK"
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
