#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fuzz_tests.sh - the typed fuzzer of /dev/sdsm (sdsm_fuzz) on every node
# of a vcluster at once, then the state it leaves.  Run on node 0 of a
# cluster of 3 nodes from the repository root:
#
#   make module selftests
#   tools/vcluster/vcluster run -n 3 --on 0 --mem 1024 --timeout 900 -- \
#	selftests/sdsm/fuzz_tests.sh [TEST...]
#
# Prints one TAP stream and exits 1 if any test failed; the cluster is
# restored after each test, as in sync_tests.sh.  Tests, in this order:
#   run           sdsm_fuzz on every node at once; every one exits 0 (no
#                 errno the ABI does not document, no hang)
#   run_user      the same as an unprivileged user (uid and gid
#                 FUZZ_UID, no other group; /dev/sdsm mode 0666 for the
#                 run) for FUZZ_USER_SECONDS: the paths that refuse
#                 (EACCES, EPERM) at volume
#   kernel_logs   no node's kernel log shows an oops, WARNING, BUG, KASAN,
#                 lockdep or sleeping-in-atomic report since the run began
#   all_up        every node still sees every other up
#   no_leak       no region is left but the default one, on every node
#   reload        rmmod and insmod on every node, no "leaked" line, logs
#                 still clean
#
# Environment: FUZZ_SECONDS (default 60) bounds each node's run,
# FUZZ_CALLS (default: no bound) the calls of all nodes together,
# FUZZ_OPS (default all) the operations to run (sdsm_fuzz --ops),
# FUZZ_THREADS (default 2) the threads per node, FUZZ_SEED (default
# random) the seed of node 0; node K uses FUZZ_SEED + K (and FUZZ_SEED +
# 100 + K in run_user).  FUZZ_USER_SECONDS (default 20) and FUZZ_UID
# (default 4005) for run_user.  To reproduce a
# failure of node K: sdsm_fuzz --seed <its seed> --seconds S on node K
# (Documentation/testing.rst).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
NODE_SH=$HERE/sdsm_node.sh
FUZZ=$HERE/sdsm_fuzz
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || { echo "Bail out! VCLUSTER_LIB not set"; exit 1; }
# shellcheck source=selftests/sdsm/tap_runner.sh
. "$HERE/tap_runner.sh" || { echo "Bail out! tap_runner.sh"; exit 1; }

: "${SDSM_TEST_TIMEOUT:=180}"
: "${FUZZ_SECONDS:=60}"
: "${FUZZ_CALLS:=}"
: "${FUZZ_THREADS:=2}"
: "${FUZZ_OPS:=}"
: "${FUZZ_SEED:=$(( (RANDOM << 15 | RANDOM) % 1000000 ))}"
: "${FUZZ_USER_SECONDS:=20}"
: "${FUZZ_UID:=4005}"
N=$SDSM_NR_NODES
UP_SEC=90
WORK=$SDSM_SHARED/fuzz-tests.$$
# The kernel-log marker of this suite: the logs are judged from it on.
MARK=fuzz.$$
BAD_LOG=$ROOT/tools/vcluster/bad-log-patterns

ALL_TESTS="run run_user kernel_logs all_up no_leak reload"

# ------------------------------------------------------------------ tests

# fuzz_all SECONDS SEED [COMMAND PREFIX...]: sdsm_fuzz on every node at
# once, each for SECONDS (and its share of FUZZ_CALLS), node K with seed
# SEED + K; each must exit 0.
fuzz_all() {
	local secs=$1 seed=$2 k rc=0 names='' calls=0 c args share=unbounded
	shift 2
	if [ ! -x "$FUZZ" ]; then
		log "$FUZZ missing: run 'make selftests' on the host"
		return 1
	fi
	args="--seconds $secs --threads $FUZZ_THREADS"
	[ -n "$FUZZ_CALLS" ] && share=$(( (FUZZ_CALLS + N - 1) / N )) &&
		args="$args --calls $share"
	[ -n "$FUZZ_OPS" ] && args="$args --ops $FUZZ_OPS"
	for k in $(nodes); do
		# A result of the run before would end the wait at once.
		rm -f "$WORK/fuzz.$k.rc" "$WORK/fuzz.$k.out"
		log "node $k: $* sdsm_fuzz --seed $((seed + k)) $args"
		# shellcheck disable=SC2086 # args is a word list
		bg "fuzz.$k" "$k" "$@" "$FUZZ" --seed $((seed + k)) $args
		names="$names fuzz.$k"
	done
	# The run, its cleanup (up to 30 s per busy region) and slack.
	# shellcheck disable=SC2086
	wait_bg $((secs + 150)) $names || rc=1
	for k in $(nodes); do
		log "---- node $k: exit status $(cat "$WORK/fuzz.$k.rc" 2>/dev/null)"
		cat "$WORK/fuzz.$k.out" 2>/dev/null
		[ "$(cat "$WORK/fuzz.$k.rc" 2>/dev/null)" = 0 ] || rc=1
		# Its first line says what it ran, to reproduce it by.
		grep -q "^sdsm_fuzz: seed=$((seed + k)) calls=$share seconds=$secs threads=$FUZZ_THREADS " \
			"$WORK/fuzz.$k.out" 2>/dev/null ||
			{ log "node $k: no line 'sdsm_fuzz: seed=$((seed + k)) calls=$share seconds=$secs threads=$FUZZ_THREADS ...'"; rc=1; }
		c=$(sed -n 's/^calls=\([0-9]*\) .*/\1/p' "$WORK/fuzz.$k.out" 2>/dev/null)
		calls=$((calls + ${c:-0}))
	done
	log "$calls calls over $N nodes"
	if [ -n "$FUZZ_CALLS" ] && [ "$calls" -lt "$FUZZ_CALLS" ]; then
		log "fewer than FUZZ_CALLS=$FUZZ_CALLS calls in ${secs}s"
		rc=1
	fi
	return $rc
}

test_run() {
	fuzz_all "$FUZZ_SECONDS" "$FUZZ_SEED"
}

# As uid FUZZ_UID: the device is opened to every user for the run only.
test_run_user() {
	# FUZZ_CALLS (make fuzz: 10^6) is the main run's; this one has 20 s.
	local k rc=0 FUZZ_CALLS=''
	dev_open_to_all || return 1
	# The shared names are this run's to create (root's are refused).
	destroy_shared || rc=1
	fuzz_all "$FUZZ_USER_SECONDS" $((FUZZ_SEED + 100)) setpriv \
		--reuid="$FUZZ_UID" --regid="$FUZZ_UID" --clear-groups || rc=1
	for k in $(nodes); do
		grep -q " uid=$FUZZ_UID\$" "$WORK/fuzz.$k.out" 2>/dev/null ||
			{ log "node $k: sdsm_fuzz did not run as uid $FUZZ_UID"; rc=1; }
	done
	dev_mode_restore || rc=1
	return $rc
}

# logs_clean: no node's kernel log since MARK matches a bad pattern (or
# says that the module leaked); a log that cannot be read, or has lost
# MARK, is not clean either.
logs_clean() {
	local k rc=0 pat out st
	pat=$(grep -v '^#' "$BAD_LOG" | grep . | paste -sd '|')
	if [ -z "$pat" ]; then
		log "no patterns in $BAD_LOG"
		return 1
	fi
	pat="$pat|sleeping function called|leaked"
	for k in $(nodes); do
		if ! out=$(run_on "$k" dmesg) ||
		   ! grep -qF "sdsm-test: $MARK" <<< "$out"; then
			log "node $k: kernel log unreadable or without $MARK"
			rc=1
			continue
		fi
		out=$(sed -n "/sdsm-test: $MARK\$/,\$p" <<< "$out")
		grep -E "$pat" <<< "$out" > /dev/null
		st=$?
		if [ $st = 0 ]; then
			log "node $k: kernel log since the run began:"
			echo "$out"
			rc=1
		elif [ $st != 1 ]; then
			log "node $k: grep failed ($st)"
			rc=1
		fi
	done
	[ $rc = 0 ] && log "the kernel logs of all $N nodes are clean"
	return $rc
}

test_kernel_logs() {
	logs_clean
}

test_all_up() {
	local k rc=0
	for k in $(nodes); do
		run_on "$k" "$NODE_SH" wait_all_up 30 || rc=1
	done
	return $rc
}

# regions_left: the regions node $1 knows besides the default one.
regions_left() {
	run_on "$1" sh -c 'cd /sys/kernel/sdsm/regions &&
		for r in *; do [ "$r" = 0 ] || echo "$r $(cat "$r/name")"; done'
}

only_default() {
	local k
	for k in $(nodes); do
		[ -z "$(regions_left "$k")" ] || return 1
	done
}

# Destroy the regions the runs shared on purpose (fz.shared.*, which the
# last run to unmap one destroys, or not when two end at once).
destroy_shared() {
	local name rc=0
	for name in $(regions_left 0 | awk '$2 ~ /^fz\.shared\./ { print $2 }'); do
		log "destroying $name, shared by the runs on purpose"
		"$HERE/sdsm_mem_util" destroy "$name" || rc=1
	done
	return $rc
}

# Nothing is left but the default region, once the shared regions are
# destroyed and the SDSM_REGION_F_OWNED ones reclaimed (retried for up to
# 30 s).
test_no_leak() {
	local k rc=0
	destroy_shared || rc=1
	if ! wait_until 60 only_default; then
		for k in $(nodes); do
			log "node $k still has regions:"
			regions_left "$k"
		done
		rc=1
	fi
	return $rc
}

# rmmod and insmod on every node; the module frees every object.
test_reload() {
	local k rc=0
	for k in $(nodes); do
		run_on "$k" "$NODE_SH" unload 60 || rc=1
	done
	for k in $(nodes); do
		run_on "$k" "$NODE_SH" load || rc=1
	done
	for k in $(nodes); do
		run_on "$k" "$NODE_SH" wait_all_up "$UP_SEC" || rc=1
	done
	logs_clean || rc=1
	return $rc
}

# ------------------------------------------------------------------ runner

restore_cluster() {
	restore_nodes
}

tap_before_test() {
	mkdir -p "$WORK"
}

tap_test_bound() {
	if [ "$1" = run ]; then
		echo $((FUZZ_SECONDS + 200))
	elif [ "$1" = run_user ]; then
		echo $((FUZZ_USER_SECONDS + 200))
	else
		echo "$SDSM_TEST_TIMEOUT"
	fi
}

tests=${*:-$ALL_TESTS}
if [ "$N" -lt 3 ]; then
	# shellcheck disable=SC2086
	tap_skip_all "needs 3 nodes" $tests
	exit 0
fi
for k in $(nodes); do
	run_on "$k" "$NODE_SH" mark "$MARK"
done
# shellcheck disable=SC2086
run_tap_tests $tests
rc=$?
rm -rf "$WORK"
exit $rc
