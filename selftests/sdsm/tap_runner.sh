# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The test runner of the cluster suites (run_cluster_tests.sh,
# sync_tests.sh, futex_tests.sh, ...), sourced by them after
# guest-lib.sh, and the helpers they share (below run_tap_tests).  run_tap_tests NAME... runs the shell
# function test_NAME of each, bounded by SDSM_TEST_TIMEOUT, then the
# suite's restore_cluster, and prints one TAP 13 stream with a plan.  A
# test's output is printed behind '#'.  Status 0 passes; 77 is a SKIP whose
# reason is the test's last line (a test returns 77 only for something
# missing by design, such as too few nodes, never because a helper failed);
# anything else fails, and so does a cluster that cannot be restored.  A
# suite may define tap_before_test NAME (run before each test, not timed)
# and tap_test_bound NAME (the seconds NAME may run, default
# SDSM_TEST_TIMEOUT); the bound, and that of the restore, are multiplied
# by RUN_ALL_BOUND_SCALE (run_all.sh: 4 on the debug kernel, where an
# exec or a lookup over 9p costs about ten times what it does on
# Debian's).  A test named in SDSM_SKIP_TESTS (space separated, set by
# run_all.sh's RUN_ALL_SKIP) does not run: its line is a SKIP whose
# reason is SDSM_SKIP_WHY.
# Exits with status 1 if any test failed.

# tap_skip_all REASON NAME...: the TAP stream of a suite that cannot run
# here by design (too few nodes): every test a SKIP with REASON.
tap_skip_all() {
	local reason=$1 i=0 t
	shift
	echo "TAP version 13"
	echo "1..$#"
	for t in "$@"; do
		i=$((i + 1))
		echo "ok $i $t # SKIP $reason"
	done
}

run_tap_tests() {
	local i=0 failed=0 out t t0 rc b scale=${RUN_ALL_BOUND_SCALE:-1}
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
		case " ${SDSM_SKIP_TESTS:-} " in
		*" $t "*)
			echo "ok $i $t # SKIP ${SDSM_SKIP_WHY:-named in RUN_ALL_SKIP}"
			continue ;;
		esac
		! declare -F tap_before_test >/dev/null || tap_before_test "$t"
		b=$SDSM_TEST_TIMEOUT
		! declare -F tap_test_bound >/dev/null || b=$(tap_test_bound "$t")
		b=$((b * scale))
		t0=$(vc_now_ms)
		TAP_BOUND=$b
		vc_bounded "$b" "test_$t" > "$out" 2>&1
		rc=$?
		case $rc in
		0 | 1 | 77) ;;
		124) echo "test timed out after ${b}s" >> "$out" ;;
		# Any other status is named: 128+N is a test shell killed
		# by signal N, 127 a job whose status the harness lost.
		*) echo "test_$t ended with status $rc" >> "$out" ;;
		esac
		[ $rc = 0 ] || [ $rc = 77 ] || tap_kernel_tail >> "$out" 2>&1
		if ! vc_bounded $((SDSM_TEST_TIMEOUT * scale)) restore_cluster \
				>> "$out" 2>&1; then
			echo "cannot restore the cluster after the test" >> "$out"
			rc=1
		fi
		tap_comment < "$out"
		echo "# $t: $(( $(vc_now_ms) - t0 )) ms including restore"
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

# tap_kernel_tail: after a failed test, the last 3 lines of sdsm in each
# node's kernel log, before the restore (which reloads the module on a
# node that lost it), so that check.sh's summary of the failure (its last
# 16 lines, all CI shows of it) has them.  A node that does not answer in
# 10 s (times RUN_ALL_BOUND_SCALE) is named.
tap_kernel_tail() {
	local k l
	for k in $(nodes); do
		l=$(ON_NODE_TIMEOUT=$((10 * ${RUN_ALL_BOUND_SCALE:-1})) run_on "$k" sh -c \
			'dmesg | grep "sdsm: " | tail -n 3' 2>/dev/null) ||
			l="(no answer)"
		printf '%s\n' "${l:-(nothing)}" | sed "s/^/node $k kernel: /"
	done
}

# tap_comment: standard input as TAP comment lines ("# " before each), with
# builtins (a sed is an exec: 0.15 s a test under TCG); past 1000 lines,
# where a loop of builtins would cost more, the rest through sed.
tap_comment() {
	local l n=0
	while IFS= read -r l || [ -n "$l" ]; do
		printf '# %s\n' "$l"
		n=$((n + 1))
		if [ "$n" -ge 1000 ]; then
			sed 's/^/# /'
			return
		fi
	done
}

# ---- helpers every suite uses ----

log() {
	echo "$*"
}

# run_on K CMD...: run on node K (locally if K is this node).
run_on() {
	local k=$1
	shift
	if [ "$k" = "$SDSM_NODE_ID" ]; then
		"$@"
	else
		on_node "$k" "$@"
	fi
}

nodes() {
	local k

	for ((k = 0; k < SDSM_NR_NODES; k++)); do
		echo "$k"
	done
}

# par_on_nodes CMD...: run CMD on every node at once, then print each
# node's output in node order; fail if any fails.  (Under TCG a fork+exec
# costs a tenth of a second and more: the waits and prints are builtins.)
par_on_nodes() {
	local k rc=0 tmpd
	local -a pids=()

	tmpd=$(mktemp -d /tmp/sdsm-par.XXXXXX) || return 1
	for ((k = 0; k < SDSM_NR_NODES; k++)); do
		run_on "$k" "$@" > "$tmpd/$k" 2>&1 &
		pids[k]=$!
	done
	for ((k = 0; k < SDSM_NR_NODES; k++)); do
		wait "${pids[k]}" || rc=1
		vc_cat "$tmpd/$k"
	done
	rm -rf "$tmpd"
	return $rc
}

# cluster_ready: every node passes sdsm_ready (guest-lib.sh): nothing to
# restore.  The others are asked one after the other, each an on_node of
# a library function (no exec, about 0.15 s under TCG); a node that does
# not answer within 30 s is not ready.
cluster_ready() {
	local k
	sdsm_ready || return 1
	for ((k = 0; k < SDSM_NR_NODES; k++)); do
		[ "$k" = "$SDSM_NODE_ID" ] && continue
		ON_NODE_TIMEOUT=30 on_node "$k" sdsm_ready || return 1
	done
}

# restore_nodes: the restore_cluster of most suites.  Nothing when
# cluster_ready (most tests leave the cluster as they found it; the
# restore below costs 1 to 1.6 s under TCG even then, the check 0.3 s),
# else every node, all at once, restored by $NODE_SH restore_up (eth0 up,
# rxe0 present, sdsm loaded, then every other node up within UP_SEC,
# default 90, seconds).  sysfs says "up" once every layer of the module
# has the node's UP.
restore_nodes() {
	cluster_ready && return 0
	par_on_nodes "$NODE_SH" restore_up "${UP_SEC:-90}" || return 1
}

# every_node_all_up: every node sees every other up within UP_SEC
# (default 90) seconds.
every_node_all_up() {
	par_on_nodes "$NODE_SH" wait_all_up "${UP_SEC:-90}"
}

# unload_all: rmmod on every node at once, each tried (the restore after
# the test loads it again), as at the end of every vcluster run.
unload_all() {
	par_on_nodes "$NODE_SH" unload 60
}

# reload_all [PARAM=VALUE...]: the module reloaded on every node with
# these parameters, and every node up.  After a node's death this is what
# makes the cluster whole again: the pages a node could no longer reach
# fail (SIGBUS, EFAULT) on it until the module is reloaded everywhere
# (Documentation/coherent-memory.rst, "Faults that fail: SIGBUS").
reload_all() {
	unload_all || return 1
	par_on_nodes "$NODE_SH" load "$@" || return 1
	every_node_all_up || return 1
}

# dev_open_to_all: /dev/sdsm mode 0666 on every node, for tests that run
# as other users; dev_mode_restore gives every node back the mode it had
# (also on a failure half way).
dev_open_to_all() {
	local k m
	DEV_MODES=()
	for k in $(nodes); do
		m=$(run_on "$k" stat -c %a /dev/sdsm) || { dev_mode_restore; return 1; }
		DEV_MODES[k]=$m
		run_on "$k" chmod 0666 /dev/sdsm || { dev_mode_restore; return 1; }
	done
}

dev_mode_restore() {
	local k rc=0
	for k in "${!DEV_MODES[@]}"; do
		run_on "$k" chmod "${DEV_MODES[k]}" /dev/sdsm || rc=1
	done
	DEV_MODES=()
	return $rc
}

# stat_of K NAME: node K's stats counter NAME.
stat_of() {
	run_on "$1" cat "/sys/kernel/sdsm/stats/$2"
}

# stat_sum NAME: the sum over the nodes of stats counter NAME.
stat_sum() {
	local k n=0
	for k in $(nodes); do
		n=$((n + $(stat_of "$k" "$1")))
	done
	echo "$n"
}

# bg NAME K CMD...: CMD on node K in the background; its output goes to
# $WORK/NAME.out as it is written (on_node would show it only at the end),
# its exit status to $WORK/NAME.rc.  A remote CMD may run as long as the
# running test's bound, not only on_node's default 120 s (the futex
# suite's 10^4-pair stress run passed that on a loaded host, its remote
# members were cancelled and the ring stalled).  Its end wakes the shell
# that started it from a pause of wait_bg (vc_wake).
bg() {
	local name=$1 k=$2 parent=$BASHPID
	shift 2
	# shellcheck disable=SC2016
	( ON_NODE_TIMEOUT=${TAP_BOUND:-$ON_NODE_TIMEOUT} run_on "$k" \
		sh -c 'o=$1; shift; exec "$@" > "$o" 2>&1' sh \
		"$WORK/$name.out" "$@"
	  echo $? > "$WORK/$name.rc"
	  vc_wake "$parent" ) &
}

finished() {
	[ -e "$WORK/$1.rc" ]
}

# manager_count K NAME: node K's stats/NAME, one of the manager_* counters
# (a lock's, barrier's or futex word's manager counts what it queued), or
# with K "all" their sum over the nodes (for a manager the test cannot
# name), into MANAGER_COUNT, for manager_queued.
manager_count() {
	local k v sum=0
	for k in $([ "$1" = all ] && nodes || echo "$1"); do
		v=$(run_on "$k" "$NODE_SH" stat "$2") && [ -n "$v" ] ||
			{ log "node $k: no stats/$2"; return 1; }
		sum=$((sum + v))
	done
	MANAGER_COUNT=$sum
}

# manager_queued K NAME N: node K's stats/NAME (K "all": their sum) moves
# by N past MANAGER_COUNT within 60 s: the waiters a test started are in
# the manager's queue, where what the test does next (a release, a WAKE,
# a node's death) finds them, rather than probably there after a sleep.
manager_queued() {
	# A MANAGER_COUNT of our own: manager_sum_at_least's polls set it,
	# and the caller's stays the count it took before its waiters.
	local want=$((MANAGER_COUNT + $3)) MANAGER_COUNT
	if [ "$1" = all ]; then
		wait_until 60 manager_sum_at_least "$2" "$want" && return 0
	else
		run_on "$1" "$NODE_SH" wait_stat "$2" "$want" 60 && return 0
	fi
	log "node $1: $3 request(s) not queued (stats/$2)"
	return 1
}

manager_sum_at_least() {
	manager_count all "$1" && [ "$MANAGER_COUNT" -ge "$2" ]
}

# wait_bg SEC NAME...: every NAME finished within SEC seconds.
wait_bg() {
	local sec=$1 n rc=0
	shift
	for n in "$@"; do
		if ! wait_until "$sec" finished "$n"; then
			log "$n: still running after ${sec}s"
			rc=1
		fi
	done
	return $rc
}

# expect NAME RESULT: NAME printed result=RESULT.
expect() {
	local got
	got=$(grep -o 'result=[A-Z0-9]*' "$WORK/$1.out" | tail -1)
	log "$1: ${got:-no result} (want result=$2): $(grep -v result= "$WORK/$1.out" | tr '\n' ' ')"
	[ "$got" = "result=$2" ]
}

# kselftest_on_nodes BIN [at_once]: the kselftest program BIN passes on
# every node, none of its tests skipped (sdsm is loaded everywhere).  The
# nodes take turns, or with "at_once" run it together: for programs whose
# tests pick ids and words that no other node's run picks.
kselftest_on_nodes() {
	local bin=$1 k rc=0 out tmpd
	local -a pids=()
	if [ ! -x "$bin" ]; then
		log "$bin missing: run 'make selftests' on the host"
		return 1
	fi
	tmpd=$(mktemp -d /tmp/sdsm-ksft.XXXXXX) || return 1
	for k in $(nodes); do
		{ run_on "$k" "$bin" > "$tmpd/$k" 2>&1; echo $? > "$tmpd/$k.rc"; } &
		pids+=($!)
		[ "${2:-}" = at_once ] || wait $!
	done
	wait "${pids[@]}"
	for k in $(nodes); do
		out=$(<"$tmpd/$k")
		if [ "$(<"$tmpd/$k.rc")" = 0 ]; then
			log "node $k: $(echo "$out" | grep -E '^# (PASSED|Totals)' | tr '\n' ' ')"
		else
			log "node $k: ${bin##*/} failed:"
			echo "$out" | grep -vE '^ok |^#  RUN|^#  +OK'
			rc=1
		fi
		if echo "$out" | grep -q 'skip:[1-9]'; then
			log "node $k: tests skipped although sdsm is loaded:"
			echo "$out" | grep -E 'SKIP' | sort | uniq -c
			rc=1
		fi
	done
	rm -rf "$tmpd"
	return $rc
}
