#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shim_tests.sh - an unmodified pthread program's threads on other nodes
# (sdsmctl -N, libsdsm-preload.so job mode, sdsmd; issue 10).  Run on node
# 0 of a 3-node vcluster from the repository root:
#
#   make module userspace
#   tools/vcluster/vcluster run -n 3 --on 0 --timeout 900 -- \
#	selftests/sdsm/shim_tests.sh [TEST...]
#
# sdsmd is started on every node first and stopped (by pid) at the end.
# The program is shim_prog.c (plain gcc -pthread).  After every test no
# region of the job and no worker process may be left on any node.
# Prints one TAP stream; exits 1 if a test failed.

# shellcheck disable=SC2317 # the tests are called by name
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
NODE_SH=$HERE/sdsm_node.sh
SDSMCTL=$ROOT/tools/sdsmctl/sdsmctl
SDSMD=$ROOT/tools/sdsmd/sdsmd
PROG=$ROOT/userlib/build/shim_prog
SYNC_PROG=$ROOT/userlib/build/shim_sync_prog
RC_PROG=$ROOT/userlib/build/shim_rc_prog
OMP_PROG=$ROOT/userlib/build/shim_omp_prog
C11_PROG=$ROOT/userlib/build/shim_c11_prog
CXX_PROG=$ROOT/userlib/build/shim_cxx_prog
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || { echo "Bail out! VCLUSTER_LIB not set"; exit 1; }
# shellcheck source=selftests/sdsm/tap_runner.sh
. "$HERE/tap_runner.sh" || { echo "Bail out! tap_runner.sh"; exit 1; }

: "${SDSM_TEST_TIMEOUT:=180}"
N=$SDSM_NR_NODES
TEST=
T=$(mktemp -d /tmp/shim.XXXXXX)
ALL_TESTS="agents run_native_checksum sync openmp place_refused c11_threads cxx_threads xz zstd lbzip2 pigz big_stacks release thread_calls signal_exit_race
map_file descriptors interrupt order prockill keys cross_node_free calloc_fresh exit_status remote_segv stack_overflow heap_full heap_limit many_threads huge_stack sigint free_batched heap_homes
missing_binary not_root spawn thread_churn node_dies"

# shim_procs K: node K's shim_prog processes, or a line saying node K did
# not answer (pgrep's 1 is "none"; anything else is not).
shim_procs() {
	on_node "$1" sh -c 'pgrep -x shim_prog; [ $? -le 1 ]' ||
		echo "(node $1 did not answer)"
}

# job_left PID: what is left of launcher pid PID, asked of every node at
# once, a line each: its regions ("j.0.PID.*") on any node, shim_prog
# processes on the others; a node that does not answer is something left.
job_left() {
	# shellcheck disable=SC2016 # expanded by the node's sh
	par_on_nodes sh -c 'for f in /sys/kernel/sdsm/regions/*/name; do
			read -r n < "$f" 2>/dev/null || continue
			case $n in "j.$1.$2."*) echo "node $SDSM_NODE_ID: $n" ;; esac
		done
		[ "$SDSM_NODE_ID" = "$1" ] && exit 0
		pgrep -x shim_prog | sed "s/^/node $SDSM_NODE_ID: shim_prog /"
		exit 0' sh "$SDSM_NODE_ID" "$1" ||
		echo "(a node did not answer)"
}

# Nothing of launcher pid $1 left anywhere (waits up to about 20 s: the
# owned regions go once every node has unmapped them).
nothing_left() {
	local left i
	for ((i = 0; i < 40; i++)); do
		left=$(job_left "$1")
		[ -z "$left" ] && return 0
		vc_sleep 0.5
	done
	log "left after the job: $left"
	return 1
}

# launch OUT MODE [ARGS]: the job in the background (sdsmctl options
# $LOPTS too); sets $lpid.
launch() {
	local out=$1
	shift
	# A background job ignores SIGINT: give it back its default.
	# shellcheck disable=SC2086 # LOPTS: options, split
	env --default-signal=INT "$SDSMCTL" -N all ${LOPTS:-} -- \
		"${LPROG:-$PROG}" "$@" \
		> "$T/$out.out" 2> "$T/$out.err" &
	lpid=$!
}

# finish OUT SEC: wait for the launcher, a child of this shell, in the
# wait builtin (no polling: it returns as the launcher exits); a watchdog
# kills it after SEC seconds.  Sets $st.
finish() {
	local dog
	rm -f "$T/$1.overran"
	( vc_sleep "$2"; : > "$T/$1.overran"; kill -KILL "$lpid" ) 2>/dev/null &
	dog=$!
	wait "$lpid"
	st=$?
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	[ -e "$T/$1.overran" ] && log "$1: still running after $2 s"
	log "$1: status $st; stdout: $(shown "$T/$1.out")"
	log "$1: stderr: $(shown "$T/$1.err")"
}

# shown FILE: FILE's lines joined by '|', or its size if it is not text
# (a compressor's output).
shown() {
	if grep -qaxv '[[:print:][:space:]]*' "$1"; then
		echo "$(wc -c < "$1") bytes, not text"
	else
		tr '\n' '|' < "$1"
	fi
}

# has_line FILE LINE WHY: FILE has LINE as a whole line, or WHY is logged.
has_line() {
	grep -qxF -- "$2" "$1" && return 0
	log "$3"
	return 1
}

# said_once FILE TEXT KEY WHY: FILE (a job's stderr) has TEXT in a line
# (else WHY is logged) and KEY in one line only.
said_once() {
	local rc=0
	grep -qF -- "$2" "$1" || { log "$4"; rc=1; }
	[ "$(grep -cF -- "$3" "$1")" = 1 ] || { log "want the line once"; rc=1; }
	return "$rc"
}

# ran_on_every_node FILE: FILE (a job's stderr) has a line ending in
# "on node K" for each node K of the cluster.
ran_on_every_node() {
	local k rc=0
	for k in $(nodes); do
		grep -q "on node $k\$" "$1" ||
			{ log "no thread ran on node $k"; rc=1; }
	done
	return "$rc"
}

# has_inbox K: node 0 knows node K's inbox region sdsmd.K.
has_inbox() {
	grep -qx "sdsmd.$1" /sys/kernel/sdsm/regions/*/name 2>/dev/null
}

# start_agents: sdsmd on every node that has none running; returns once
# node 0 knows every node's inbox region (a launcher needs it).
start_agents() {
	local k i rc=0
	for k in $(nodes); do
		# shellcheck disable=SC2016
		run_on "$k" sh -c '[ -s /tmp/sdsmd.pid ] &&
			kill -0 "$(cat /tmp/sdsmd.pid)" 2>/dev/null && exit 0
			"$1" > /tmp/sdsmd.log 2>&1 < /dev/null &
			echo $! > /tmp/sdsmd.pid' sh "$SDSMD"
	done
	for k in $(nodes); do
		for ((i = 0; i < 50; i++)); do
			has_inbox "$k" && break
			sleep 0.2
		done
		if [ "$i" = 50 ]; then
			log "node $k: no sdsmd.$k region: $(run_on "$k" cat /tmp/sdsmd.log)"
			rc=1
		fi
	done
	return "$rc"
}

# agent_kill K: node K's sdsmd, if any, is sent SIGTERM.
agent_kill() {
	# shellcheck disable=SC2016
	run_on "$1" sh -c '[ -s /tmp/sdsmd.pid ] &&
		kill "$(cat /tmp/sdsmd.pid)"; rm -f /tmp/sdsmd.pid'
}

stop_agents() {
	local k
	for k in $(nodes); do
		agent_kill "$k"
	done
}

# reload_node K [PARAM=V...]: node K's module loaded again with PARAMs:
# its sdsmd (which holds /dev/sdsm) goes first, and its inbox region with
# it everywhere (up to 20 s), and comes back after.
reload_node() {
	local k=$1 i
	shift
	agent_kill "$k"
	for ((i = 0; i < 100; i++)); do
		has_inbox "$k" || break
		sleep 0.2
	done
	run_on "$k" "$NODE_SH" unload 60 > /dev/null &&
		run_on "$k" "$NODE_SH" load "$@" > /dev/null &&
		par_on_nodes "$NODE_SH" wait_all_up 60 > /dev/null &&
		start_agents
}

# The agents' logs, after a failure.
agent_logs() {
	local k
	for k in $(nodes); do
		log "node $k sdsmd: $(run_on "$k" cat /tmp/sdsmd.log | tr '\n' '|')"
	done
}

# ------------------------------------------------------------------ tests

# sdsmd runs on every node: its inbox region is known everywhere.
test_agents() {
	start_agents
}

# 3 threads on nodes 1, 2, 0 (round-robin after main()'s node); joins,
# return values, globals, heap, main's stack; output of the workers; the
# checksum of a native run.  The job's processes, main's and each thread's
# on its node, run without ASLR (sdsmctl and sdsmd set ADDR_NO_RANDOMIZE;
# the guests' kernels run user space without ASLR anyway under TCG, so
# the personality is what shows it); the native run has it.
test_run_native_checksum() {
	local native rc=0 k cpus
	"$PROG" run > "$T/run-native.out" 2>&1
	native=$(grep '^checksum' "$T/run-native.out")
	grep -qx 'main aslr on' "$T/run-native.out" ||
		{ log "the native run does not say 'main aslr on'"; rc=1; }
	launch run run
	finish run 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	for k in 0 1 2; do
		grep -qx "thread $k on node $(((k + 1) % 3))" "$T/run.out" ||
			{ log "thread $k did not report node $(((k + 1) % 3))"; rc=1; }
		grep -qx "thread $k aslr off" "$T/run.out" ||
			{ log "thread $k's process runs with ASLR"; rc=1; }
	done
	grep -qx 'main aslr off' "$T/run.out" ||
		{ log "main's process runs with ASLR"; rc=1; }
	grep -qx "$native" "$T/run.out" ||
		{ log "checksum differs from native: $native"; rc=1; }
	grep -qx 'returns t0t1t2' "$T/run.out" || { log "return values"; rc=1; }
	grep -qx 'detached ran' "$T/run.out" || { log "detached thread"; rc=1; }
	cpus=0
	for k in $(nodes); do
		cpus=$((cpus + $(run_on "$k" nproc)))
	done
	grep -qx "cpus $cpus $cpus" "$T/run.out" ||
		{ log "want cpus $cpus $cpus (the CPUs of the job's nodes)"; rc=1; }
	grep -q 'differs\|failed\|equals' "$T/run.out" && { log "pthread_self/equal"; rc=1; }
	nothing_left "$lpid" || rc=1
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

# glibc's mutexes, condvars, barriers, rwlocks, semaphores, once, spin
# locks and atomics between threads on nodes 0, 1 and 2 (the futex
# redirect): the same results as a native run, every thread's node seen.
# Barriers are the cluster's (SDSM_IOC_BARRIER): node 0's two threads
# wait 12 times each (before, glibc's barrier over the futex: none).
test_sync() {
	local rc=0 k dup b0 b1
	"$SYNC_PROG" 6 30 > "$T/sync-native.out" 2>/dev/null ||
		{ log "the native run failed: $(cat "$T/sync-native.out")"; return 1; }
	b0=$(cat /sys/kernel/sdsm/stats/barrier_waits) || return 1
	LPROG=$SYNC_PROG launch sync 6 30
	finish sync 600
	b1=$(cat /sys/kernel/sdsm/stats/barrier_waits) || return 1
	log "node 0: $((b1 - b0)) cluster barrier waits"
	[ $((b1 - b0)) -ge 24 ] || { log "want >= 24"; rc=1; }
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	diff "$T/sync-native.out" "$T/sync.out" > "$T/sync.diff" ||
		{ log "results differ from native: $(tr '\n' '|' < "$T/sync.diff")"; rc=1; }
	for k in 0 1 2; do
		grep -q "on node $k tid" "$T/sync.err" ||
			{ log "no thread ran on node $k"; rc=1; }
	done
	# glibc keeps owners' thread ids in mutexes and rwlocks.
	dup=$(sed -n 's/.* tid //p' "$T/sync.err" | sort | uniq -d)
	[ -z "$dup" ] || { log "thread ids not unique across nodes: $dup"; rc=1; }
	nothing_left "$lpid" || rc=1
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

# An OpenMP program whose team is libgomp's default: libgomp sizes it in
# its constructor, before the shim's and before any worker runs, from the
# CPUs it may run on, which must be those of every node of the job (each
# node's sdsmd counts its own).  Results as a native run of a team that
# size.  By default thread 1 goes to the node after main()'s (OpenMP's
# thread 0 on node 0), so thread k runs on node k (before, thread 1 went
# to node 0 and the last node had none); with SDSM_PLACE=2,1 thread 1
# goes to node 2 and thread 2 to node 1.
test_openmp() {
	local rc=0 k c cpus=0 team run place='' n=0
	for k in $(nodes); do
		c=$(run_on "$k" nproc) || return 1
		cpus=$((cpus + c))
		n=$((n + 1))
		[ "$k" = 0 ] || place=$k${place:+,}$place
	done
	OMP_NUM_THREADS=$cpus "$OMP_PROG" > "$T/omp-native.out" 2>/dev/null ||
		{ log "the native run failed: $(cat "$T/omp-native.out")"; return 1; }
	unset OMP_NUM_THREADS
	for run in omp omp-placed; do
		if [ $run = omp ]; then
			LPROG=$OMP_PROG launch $run
		else
			SDSM_PLACE=$place LPROG=$OMP_PROG launch $run
		fi
		finish $run 300
		[ "$st" = 0 ] || { log "$run: want status 0"; rc=1; }
		team=$(sed -n 's/^team //p' "$T/$run.out")
		[ "$team" = "$cpus" ] ||
			{ log "$run: a team of '$team' threads, want $cpus (the CPUs of the job's nodes)"; rc=1; }
		diff "$T/omp-native.out" "$T/$run.out" > "$T/$run.diff" ||
			{ log "$run: results differ from native: $(tr '\n' '|' < "$T/$run.diff")"; rc=1; }
		nothing_left "$lpid" || rc=1
	done
	# The default: the nodes after main()'s, in turn.
	for k in $(nodes); do
		grep -q "^thread $k on node $k tid" "$T/omp.err" ||
			{ log "omp: thread $k not on node $k"; rc=1; }
	done
	for k in $(nodes); do
		c=$(((n - k) % n))
		grep -q "^thread $k on node $c tid" "$T/omp-placed.err" ||
			{ log "omp-placed (SDSM_PLACE=$place): thread $k not on node $c"; rc=1; }
	done
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

# A C11 threads program (thrd_create, mtx_t plain and recursive, cnd_t,
# call_once, a tss_t with a destructor, thrd_join's int): glibc makes
# them of its pthread functions inside libc, past the job's interposers.
# Its 6 threads run 2 on each node with a native run's results, in a
# sequential job and in a job of release consistency (whose mtx_lock
# must be an acquire).  Before tss_* were interposed, the tss_t was a
# key of node 0's process and the threads of nodes 1 and 2 failed.
test_c11_threads() {
	local rc=0 k run
	"$C11_PROG" 6 40 > "$T/c11-native.out" 2>/dev/null ||
		{ log "the native run failed: $(cat "$T/c11-native.out")"; return 1; }
	for run in c11 c11-release; do
		if [ $run = c11 ]; then
			LPROG=$C11_PROG launch $run 6 40
		else
			LPROG=$C11_PROG LOPTS=--consistency=release launch $run 6 40
		fi
		finish $run 300
		[ "$st" = 0 ] || { log "$run: want status 0"; rc=1; }
		diff "$T/c11-native.out" "$T/$run.out" > "$T/$run.diff" ||
			{ log "$run: results differ from native: $(tr '\n' '|' < "$T/$run.diff")"; rc=1; }
		for k in $(nodes); do
			[ "$(grep -c "on node $k tid" "$T/$run.err")" = 2 ] ||
				{ log "$run: want 2 threads on node $k"; rc=1; }
		done
		nothing_left "$lpid" || rc=1
	done
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

# A C++20 program (std::thread, std::mutex, std::condition_variable,
# std::shared_mutex; std::atomic wait/notify, std::barrier,
# std::counting_semaphore, std::latch, std::async and std::promise, whose
# futex(2) calls libstdc++ makes inline in the program; std::jthread's
# stop token): a native run's results, its 6 threads 2 on each node, and
# std::thread::hardware_concurrency() the CPUs of the job's nodes.
test_cxx_threads() {
	local rc=0 k cpus=0 hw
	for k in $(nodes); do
		cpus=$((cpus + $(run_on "$k" nproc)))
	done
	"$CXX_PROG" 6 40 > "$T/cxx-native.out" 2>/dev/null ||
		{ log "the native run failed: $(cat "$T/cxx-native.out")"; return 1; }
	LPROG=$CXX_PROG launch cxx 6 40
	finish cxx 300
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	diff "$T/cxx-native.out" "$T/cxx.out" > "$T/cxx.diff" ||
		{ log "results differ from native: $(tr '\n' '|' < "$T/cxx.diff")"; rc=1; }
	for k in $(nodes); do
		[ "$(grep -c "on node $k tid" "$T/cxx.err")" = 2 ] ||
			{ log "want 2 threads on node $k"; rc=1; }
	done
	hw=$(sed -n 's/^hardware_concurrency //p' "$T/cxx.err")
	[ "$hw" = "$cpus" ] ||
		{ log "hardware_concurrency '$hw', want $cpus (the CPUs of the job's nodes)"; rc=1; }
	nothing_left "$lpid" || rc=1
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

# A program of the distribution, unmodified: xz compresses 1 MB with 3
# threads (blocks of 128 KiB: the main thread reads and writes the files,
# the threads of nodes 1, 2 and 0 compress) to the bytes of a native run,
# and a job of xz -d gives the input back.
test_xz() {
	local rc=0 want
	head -c 750000 /dev/urandom | base64 > "$T/xz.in" || return 1
	want=$(xz -T3 --block-size=128KiB -3 -c "$T/xz.in" | md5sum) ||
		{ log "the native run failed"; return 1; }
	LPROG=xz launch xz -vv -T3 --block-size=128KiB -3 -k "$T/xz.in"
	finish xz 300
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	grep -q 'Using up to 3 threads' "$T/xz.err" ||
		{ log "xz did not use 3 threads"; rc=1; }
	[ "$(md5sum < "$T/xz.in.xz")" = "$want" ] ||
		{ log "the output differs from a native run's"; rc=1; }
	nothing_left "$lpid" || rc=1
	mv "$T/xz.in" "$T/xz.orig"
	LPROG=xz launch xzd -T3 -d -k "$T/xz.in.xz"
	finish xzd 300
	[ "$st" = 0 ] || { log "xz -d: want status 0"; rc=1; }
	cmp -s "$T/xz.in" "$T/xz.orig" ||
		{ log "xz -d did not give the input back"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# zstd reads its input in a thread of its own (asynchronous I/O), from the
# descriptor main() opened; with 3 threads, that reader is on another node
# and reads through the launcher.  Before, its read failed with EBADF
# ("zstd: error 37 : Read error").  The output is a native run's.
test_zstd() {
	local rc=0 want
	head -c 750000 /dev/urandom | base64 > "$T/zstd.in" || return 1
	want=$(zstd -q -T3 -3 -c "$T/zstd.in" | md5sum) ||
		{ log "the native run failed"; return 1; }
	LPROG=zstd launch zstd -q -T3 -3 -f "$T/zstd.in" -o "$T/zstd.in.zst"
	finish zstd 300
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	[ "$(md5sum < "$T/zstd.in.zst")" = "$want" ] ||
		{ log "the output differs from a native run's"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Debian's lbzip2 and pigz compress 2 MB with 3 threads over the job to a
# native run's bytes.  lbzip2's last thread tells main() it is done with
# kill() of main()'s pid, from another node (before: "killed by signal 6",
# its abort() when that kill() failed).
test_lbzip2() {
	compressor lbzip2 lbzip2 -n 3 -c
}

test_pigz() {
	compressor pigz pigz -p 3 -c
}

# compressor OUT PROG ARGS...: PROG ARGS FILE over the job, against a
# native run.
compressor() {
	local rc=0 out=$1 want
	shift
	[ -s "$T/comp.in" ] || head -c 1500000 /dev/urandom | base64 > "$T/comp.in" ||
		return 1
	want=$("$@" "$T/comp.in" | md5sum) ||
		{ log "the native run failed"; return 1; }
	LPROG=$1 launch "$out" "${@:2}" "$T/comp.in"
	finish "$out" 300
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	[ "$(md5sum < "$T/$out.out")" = "$want" ] ||
		{ log "the output differs from a native run's"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Threads made with a 16 MiB stack (pthread_attr_setstacksize), each with
# 12 MiB of locals, on nodes 0, 1 and 2: they get that stack (a job's
# threads have 2 MiB otherwise), with a native run's checksum.
test_big_stacks() {
	local rc=0
	"$PROG" bigstack 3 > "$T/big-native.out" 2>/dev/null ||
		{ log "the native run failed: $(cat "$T/big-native.out")"; return 1; }
	launch big bigstack 3
	finish big 300
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	diff "$T/big-native.out" "$T/big.out" > "$T/big.diff" ||
		{ log "results differ from native: $(tr '\n' '|' < "$T/big.diff")"; rc=1; }
	ran_on_every_node "$T/big.err" || rc=1
	nothing_left "$lpid" || rc=1
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

# A bad SDSM_PLACE is refused before main() runs, naming what is wrong.
test_place_refused() {
	local rc=0 v want
	for v in "7:node 7 is not a node of the job" \
		 "1,x:want node ids separated by commas" \
		 "1,:want node ids separated by commas"; do
		want=${v#*:}
		SDSM_PLACE=${v%%:*} launch place
		finish place 60
		[ "$st" = 127 ] || { log "SDSM_PLACE=${v%%:*}: status $st, want 127"; rc=1; }
		grep -q "SDSM_PLACE=${v%%:*}: $want" "$T/place.err" ||
			{ log "SDSM_PLACE=${v%%:*}: no message '$want'"; rc=1; }
		nothing_left "$lpid" || rc=1
	done
	return "$rc"
}

# Attribute $2 (policy, consistency) of region $1, as node 0 shows it.
region_attr() {
	local d
	for d in /sys/kernel/sdsm/regions/*; do
		[ "$(cat "$d/name" 2>/dev/null)" = "$1" ] || continue
		cat "$d/$2"
		return 0
	done
	echo "no region $1"
}

# printed OUT WORD: the job's standard output so far has WORD in a line
# (read with builtins: a grep is an exec, a tenth of a second under TCG).
printed() {
	local l
	[ -r "$T/$1.out" ] || return 1
	while IFS= read -r l || [ -n "$l" ]; do
		[[ $l == *"$2"* ]] && return 0
	done < "$T/$1.out"
	return 1
}

# printed_soon OUT WORD [SEC]: wait (default 60 s at most) until the job
# prints WORD, or fail as soon as it has ended without.
printed_soon() {
	local i
	for ((i = 0; i < ${3:-60} * 10; i++)); do
		printed "$1" "$2" && return 0
		kill -0 "$lpid" 2>/dev/null || { printed "$1" "$2"; return; }
		vc_sleep 0.1
	done
	return 1
}

# sleeping OUT: wait (bounded) until the job's main prints "sleeping".
sleeping() {
	printed_soon "$1" sleeping
}

# sdsmctl -N all --consistency=release: the heaps and globals are release
# regions (the control region stays sequential), and a program free of
# data races (shim_rc_prog.c: mutexes, condvars, barriers with threads
# writing interleaved words of the same pages, rwlocks, a semaphore, once,
# spin locks, malloc on one node and free on another) gives a native
# run's results with its threads on every node; diffs were sent.
test_release() {
	local rc=0 k want got d0 d1 r
	LOPTS=--consistency=release launch rcheap sleep
	sleeping rcheap
	for r in c g $(for k in $(nodes); do echo "h$k"; done); do
		want=release
		[ "$r" = c ] && want=sequential
		got=$(region_attr "j.$SDSM_NODE_ID.$lpid.$r" consistency)
		[ "$got" = "$want" ] ||
			{ log "region $r: '$got', want $want"; rc=1; }
	done
	kill -INT "$lpid"
	finish rcheap 60
	[ "$st" = 130 ] || { log "want status 130"; rc=1; }
	nothing_left "$lpid" || rc=1

	"$RC_PROG" 6 20 > "$T/rc-native.out" 2>/dev/null ||
		{ log "the native run failed: $(cat "$T/rc-native.out")"; return 1; }
	d0=$(stat_sum diffs_sent)
	LPROG=$RC_PROG LOPTS=--consistency=release launch rc 6 20
	finish rc 600
	d1=$(stat_sum diffs_sent)
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	diff "$T/rc-native.out" "$T/rc.out" > "$T/rc.diff" ||
		{ log "results differ from native: $(tr '\n' '|' < "$T/rc.diff")"; rc=1; }
	ran_on_every_node "$T/rc.err" || rc=1
	log "diffs sent by the nodes: $((d1 - d0))"
	[ "$d1" -gt "$d0" ] || { log "no diff sent: not release-consistent"; rc=1; }
	nothing_left "$lpid" || rc=1
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

# exit(42) in a thread on node 1 ends the program with 42.
# A file in node 0's own /tmp (no shared filesystem), mapped MAP_PRIVATE
# and read-only MAP_SHARED by main: threads on every node read what a native
# run reads; their stores to the private mapping are seen by main and never
# reach the file; a writable MAP_SHARED mapping is refused, naming the call.
# pthread calls on threads of other nodes: a thread on node 1 creates
# threads (one placed on the launcher's node 0) and joins them; cancel in
# pthread_cond_wait (cleanup handler) and in sleep; pthread_kill with a
# handler main installed; tryjoin and timedjoin.  As a native run, except
# the sum of the nested threads' nodes.
test_thread_calls() {
	local native rc=0 want
	native=$("$PROG" threads)
	launch threads threads
	finish threads 150
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	# Nodes 2, 0 and 1, each + 100.
	has_line "$T/threads.out" 'nested 303' \
		"want 'nested 303': threads on nodes 2, 0, 1" || rc=1
	want=$(grep -v '^nested ' <<< "$native")
	[ "$(grep -v '^nested ' "$T/threads.out")" = "$want" ] ||
		{ log "want as native: $(tr '\n' '|' <<< "$want")"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# A node signals threads of the job (pthread_kill, pthread_cancel) as they
# exit: 30 rounds over nodes 0, 1, 2, each a thread cancelled in pause()
# and one that returns as soon as its SIGUSR1 handler ran.  glibc takes the
# thread's exit_lock (in its struct pthread, on its sdsm stack) on both
# sides with every signal blocked; before the fix a contended one was a
# trapped futex with SIGSYS blocked, and the kernel killed the launcher or
# a worker ("Bad system call").
test_signal_exit_race() {
	local rc=0
	launch race race 30
	finish race 150
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/race.out" 'race 30 cancels 30 kills 30' \
		"want every thread cancelled or signalled and joined" || rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

test_map_file() {
	local native rc=0 k want
	native=$("$PROG" mapfile 3)
	grep -qx 'shared-write ok' <<< "$native" ||
		{ log "native run: $(tr '\n' '|' <<< "$native")"; rc=1; }
	launch mapfile mapfile 3
	finish mapfile 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	for k in 0 1 2; do
		has_line "$T/mapfile.out" "thread $k node $(((k + 1) % 3))" \
			"thread $k did not run on node $(((k + 1) % 3))" || rc=1
	done
	want=$(grep -E '^(sums |rw\[|file )' <<< "$native")
	[ "$(grep -E '^(sums |rw\[|file )' "$T/mapfile.out")" = "$want" ] ||
		{ log "want as native: $(tr '\n' '|' <<< "$want")"; rc=1; }
	has_line "$T/mapfile.out" 'shared-write errno 38' \
		"want the writable MAP_SHARED mapping refused (ENOSYS)" || rc=1
	grep -qF 'sdsm: mmap(MAP_SHARED, PROT_WRITE) of a file is not supported in a job' \
		"$T/mapfile.err" || { log "no message naming the mmap"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Descriptors and files are the launcher's: main on node 0 opens a file of
# its /tmp as descriptor 8 and unlinks it; threads on nodes 1, 2 and 0
# pread it (into their stack and into memory they mapped at an address of
# their own), fstat, fcntl, dup, mmap and pwrite it, and main reads back
# each thread's line.  Each thread also writes a file of its own with
# fopen() and stat()s one of main's: node 0's /tmp has them all; and it
# poll()s and select()s a pipe main made (readable, writable, a wait for
# what never comes that times out; before, the workers' polls found the
# O_PATH placeholder: POLLNVAL, and select() found it ready); and it makes
# a pipe and an eventfd that main reads after joining it (before, the
# worker's own: EBADF in main).  A call
# that is not passed on (fchdir) is refused on the workers with EBADF and a
# message naming it.  Before, every call on the other nodes failed with
# EBADF (zstd's reader thread: "Read error"), and their files were made in
# their own node's /tmp, and a worker thread's output reached the terminal
# after what main() printed once it had joined the thread.  Then the same
# with --consistency=release, where the data a call moves is released and
# acquired around it.
test_descriptors() {
	local rc=0 k run
	for run in sequential release; do
		LOPTS=--consistency=$run launch fds fds 3
		finish fds 120
		[ "$st" = 0 ] || { log "$run: want status 0"; rc=1; }
		for k in 0 1 2; do
			local want="errno 9"
			[ "$k" = 0 ] && want="errno 20"
			has_line "$T/fds.out" "thread $(((k + 2) % 3)) node $k pread 10 private 10 fstat 1 fl 2 dup 1 mmap 1 fopen 1 stat 5 poll 1 select 1 fchdir -1 $want" \
				"$run: node $k's thread: not every call worked" || rc=1
			grep -q "^line $(((k + 2) % 3)): node $k thr $(((k + 2) % 3)) *\$" \
				"$T/fds.out" || { log "$run: no line of node $k's thread"; rc=1; }
			has_line "$T/fds.out" "file $(((k + 2) % 3)): from node $k" \
				"$run: node 0 has no file of node $k's thread" || rc=1
			has_line "$T/fds.out" "made $(((k + 2) % 3)): pipe a eventfd $(((k + 2) % 3 + 1))" \
				"$run: main cannot read node $k's thread's pipe and eventfd" || rc=1
		done
		grep -qF 'sdsm: fchdir() on descriptor 8 from a thread on node 1 is not supported' \
			"$T/fds.err" || { log "$run: no message naming fchdir"; rc=1; }
		# The launcher writes every thread's output: in order, each
		# thread's before what main() prints after joining it.
		awk '/^line /{m=1} /^thread /&&m{bad=1} END{exit bad}' \
			"$T/fds.out" ||
			{ log "$run: a thread's output after main()'s"; rc=1; }
		nothing_left "$lpid" || rc=1
	done
	return "$rc"
}

# Standard output is in program order: main prints a line into its fully
# buffered stdout (a file), five threads on nodes 1, 2, 0, 1 and 2, one
# after the other, print theirs (the last also the start of a line main
# ends after joining it), then main prints a last line: a native run's
# output.
# Before, main's first line came after the threads' (it waited in the
# launcher's buffer while they wrote), and the part line after main's
# last one.
test_order() {
	local rc=0
	"$PROG" order 5 > "$T/order-native.out" ||
		{ log "the native run failed"; return 1; }
	launch order order 5
	finish order 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	diff "$T/order-native.out" "$T/order.out" > "$T/order.diff" ||
		{ log "output differs from native: $(tr '\n' '|' < "$T/order.diff")"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# A signal ends a passed-on poll() with EINTR; a thread cancelled in a
# passed-on read() of an empty pipe is joined, and its clean-up handler's
# printf() goes: the read is ended (each hung before 2026-12-05).  A
# handler without SA_RESTART ends a passed-on read() with EINTR (it went
# on before 2026-12-05, evening); the program takes SA_RESTART away with
# siginterrupt(), which glibc does past the shim's sigaction() (the read
# went on until the test's bound before 2026-12-05, night).  A handler that
# siglongjmp()s out of a
# passed-on read() leaves it: the printf() after it was taken for the
# handler's, nested in the read, and got EINTR (before 2026-12-05,
# evening).
test_interrupt() {
	local rc=0
	launch interrupt interrupt
	finish interrupt 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/interrupt.out" "interrupt poll -1 errno 4 early 1" \
		"the signal did not end the poll at once" || rc=1
	has_line "$T/interrupt.out" "interrupt cleanup on node 2" \
		"the cancelled thread's clean-up handler printed nothing" || rc=1
	has_line "$T/interrupt.out" "interrupt cancel joined 1 canceled 1 cleanup 1 early 1" \
		"the thread cancelled in read() was not joined at once" || rc=1
	has_line "$T/interrupt.out" "interrupt read -1 errno 4 early 1" \
		"a handler without SA_RESTART did not end the read at once" || rc=1
	has_line "$T/interrupt.out" "interrupt jump early 1" \
		"the printf() after a handler's siglongjmp() out of read() was lost" || rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# A process-directed signal from a thread on another node reaches the
# job's process: main blocks SIGUSR1 and SIGUSR2, a thread on node 1
# kill()s main's pid and one on node 2 its own getpid(), and main takes
# both with sigtimedwait (lbzip2's threads tell main they are done so).
# Before, node 1's kill() went to whatever process of node 1 had that pid
# (ESRCH: lbzip2 aborts) and node 2's killed its own worker.
test_prockill() {
	local rc=0
	launch prockill prockill
	finish prockill 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/prockill.out" "prockill kill 0 0 got 10 12" \
		"main did not get both signals" || rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Thread-specific keys are the job's: main makes one with a destructor, a
# thread on node 1 makes another, and threads on nodes 2, 0 and 1 set and
# read both; every destructor runs before its thread is joined.  Before,
# a key was glibc's, of one process: pthread_setspecific() failed with
# EINVAL on the other nodes.
test_keys() {
	local rc=0
	launch keys keys 3
	finish keys 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/keys.out" "keys seen 3 destroyed 3 bad 0" \
		"want every thread to see its values and its destructor run" || rc=1
	ran_on_every_node "$T/keys.err" || rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Memory malloc'ed on node 0 and freed (or munmapped) on node 1 goes back
# to node 0's heap: 1.25 GiB passes through a 1 GiB heap.
test_cross_node_free() {
	local rc=0
	launch xfree xfree
	finish xfree 150
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/xfree.out" 'freer node 1' \
		"the freeing thread did not run on node 1" || rc=1
	has_line "$T/xfree.out" 'xfree ok' \
		"blocks freed on node 1 were not given back to node 0" || rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# calloc() leaves the heap's fresh pages alone, as glibc's does a fresh
# mmap: main (node 0) callocs 512 pages and a thread on node 1 writes
# them.  Node 0 must not have written them (it would own every page, and
# node 1 would need a read and an upgrade for each): its write faults over
# the whole job stay under half the array.  Before, the shim's memset
# cost node 0 a write fault for each of the 512 pages.
test_calloc_fresh() {
	local rc=0 b a w
	b=$(( $(stat_of 0 write_faults_local) + $(stat_of 0 write_faults_remote) ))
	launch calloc calloc
	finish calloc 120
	a=$(( $(stat_of 0 write_faults_local) + $(stat_of 0 write_faults_remote) ))
	w=$((a - b))
	log "node 0: $w write faults over the job"
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/calloc.out" 'calloc ok writer node 1' 		"the array was not zero, not written, or not by node 1" || rc=1
	[ "$w" -lt 256 ] ||
		{ log "node 0 wrote the calloc'ed pages: $w write faults"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

test_exit_status() {
	local rc=0
	launch exit exit
	finish exit 120
	[ "$st" = 42 ] || { log "want status 42"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# segv_on_node1 MODE: shim_prog MODE ends with SIGSEGV in a thread on node
# 1: status 139, a message naming node 1 and the signal.
segv_on_node1() {
	local rc=0
	launch "$1" "$1"
	finish "$1" 120
	[ "$st" = 139 ] || { log "want status 139"; rc=1; }
	grep -q 'node 1: .*signal 11' "$T/$1.err" ||
		{ log "no message naming node 1 and signal 11"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# SIGSEGV in a thread on node 1 (a write through NULL).
test_remote_segv() {
	segv_on_node1 segv
}

# A thread made without a stack size (thread 0, on node 1) gets glibc's
# default, 8 MiB, as natively: 384 levels of 16 KiB of locals return
# ("deep returned"); 600 levels run past the end, and the thread dies of
# SIGSEGV in the guard below the stack, and the job with it, as a native
# thread that runs into its guard page.  Before 2026-12-06 a job's threads
# had 2 MiB: the 6 MiB died; and until ec9124b there was no guard: 136
# levels wrote over the 192 KiB of node 1's heap below the stack without a
# fault and returned.
test_stack_overflow() {
	local rc=0
	segv_on_node1 overflow || rc=1
	grep -q '^deep returned' "$T/overflow.out" ||
		{ log "6 MiB of locals did not fit in the default stack"; rc=1; }
	return "$rc"
}

# heapfull_ok OUT MB BIG: the heapfull job OUT ran with a heap of MB MiB
# a node: status 0; "heapbig BIG" (ok, or errno 12); blocks of 128 MiB
# (each takes 192 MiB of the heap: 64 MiB slots and the block's metadata)
# until ENOMEM; the line naming the call, node 1 and the heap's size, once
# (for the first block that failed: the big one, if it did).
heapfull_ok() {
	local rc=0 n size=134217728
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	grep -qx "heapbig $3" "$T/$1.out" || { log "want heapbig $3"; rc=1; }
	n=$(sed -n 's/^heapfull blocks \([0-9]*\) errno 12$/\1/p' "$T/$1.out")
	if [ -z "$n" ] || [ "$n" -lt $(($2 / 256)) ] || [ "$n" -gt $(($2 / 128)) ]; then
		log "want $(($2 / 256)) to $(($2 / 128)) blocks of 128 MiB, then ENOMEM"
		rc=1
	fi
	[ "$3" = ok ] || size=1610612736
	said_once "$T/$1.err" "malloc() of $size bytes on node 1 failed (ENOMEM): the node's heap is full; this job over several nodes (sdsmctl -N) has a heap of $2 MiB on each node (sdsm's max_region_mb)" \
		"heap is full" "no line naming malloc(), node 1 and a heap of $2 MiB" ||
		rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# A thread on node 1 mallocs a block of 1536 MiB and uses its ends, then
# blocks of 128 MiB until one fails: a job's heap on each node is as large
# as the module lets a region be (max_region_mb, 4096 MiB by default)
# and untouched costs nothing, so the big block works in a node of 1 GiB
# of memory, as natively (overcommit).  ENOMEM comes once the heap is
# full, and one line says why, naming the call, the node and the heap's
# size.  The job goes on (status 0) and frees them.  Before 2026-12-06
# every heap was 1 GiB: the big block failed with ENOMEM.
test_heap_full() {
	local mb
	mb=$(cat /sys/module/sdsm/parameters/max_region_mb) || return 1
	launch heapfull heapfull
	finish heapfull 120
	heapfull_ok heapfull "$((mb / 64 * 64))" ok
}

# A node whose max_region_mb (1024 here) refuses the launcher's heap size
# (its own, 4096 MiB): the launcher halves the heaps until every node takes
# them, and the job runs with a heap of 1024 MiB a node, which the
# heap-full line names.  (The node is reloaded with its defaults after.)
test_heap_limit() {
	reload_node $((N - 1)) max_region_mb=1024 || return 1
	launch heaplimit heapfull
	finish heaplimit 120
	heapfull_ok heaplimit 1024 "errno 12"
}

# main makes threads (all on node 0: SDSM_PLACE=0) that wait until it has
# made 300 or pthread_create() failed: a job has 256 threads alive or not
# yet joined, main() included, so the 256th fails with EAGAIN, and one
# line says why, naming the call, the node and the limit (natively all 300
# are made).  Then they are joined: status 0.  Before 2026-12-06 nothing
# was said.
test_many_threads() {
	local rc=0
	SDSM_PLACE=0 launch many manythreads
	finish many 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	grep -qx "manythreads 255 errno 11" "$T/many.out" ||
		{ log "want 255 threads, then EAGAIN"; rc=1; }
	said_once "$T/many.err" "pthread_create() on node 0 failed (EAGAIN): a job over several nodes (sdsmctl -N) has at most 256 threads alive or not yet joined at once, main() included" \
		"at most 256 threads" "no line naming the limit" || rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# main (node 0: SDSM_PLACE=0) makes a thread with a 16 GiB stack: more
# than the node's heap, so pthread_create() fails with EAGAIN, as it does
# natively in a guest of 1 GiB, and one line says why, naming the call,
# the node, the stack's size and the heap's; a thread made next with the
# default stack runs.  Before 2026-12-06 nothing was said.
test_huge_stack() {
	local rc=0 mb
	mb=$(cat /sys/module/sdsm/parameters/max_region_mb) || return 1
	"$PROG" hugestack > "$T/hugenat.out" 2>&1
	log "natively: $(shown "$T/hugenat.out")"
	has_line "$T/hugenat.out" "hugestack errno 11 then 0" \
		"natively not EAGAIN: the guest's memory is too large for this test" ||
		rc=1
	SDSM_PLACE=0 launch huge hugestack
	finish huge 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/huge.out" "hugestack errno 11 then 0" \
		"want EAGAIN, then a thread" || rc=1
	said_once "$T/huge.err" "pthread_create() on node 0 failed (EAGAIN): no room for a stack of 17179869184 bytes in the node's heap; this job over several nodes (sdsmctl -N) has a heap of $((mb / 64 * 64)) MiB on each node (sdsm's max_region_mb)" \
		"no room for a stack" "no line naming the stack and the heap" ||
		rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# sleeps PID: the times PID's threads went to sleep (their voluntary
# context switches), summed.
sleeps() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# A job that waits costs the cluster no coherence traffic: the loops of
# its processes (the launcher's service thread, each worker's) write the
# job's control region only when they have something to say, so what
# every node reads there stays with the readers.  (The launcher wrote each
# node's output ring every 20 ms, full or empty, and every node's loop
# took the page back: about 70 messages a second.)  Nor does it take the
# launcher's node's CPU: its service thread wakes when woken, and else
# every 200 ms (every 20 ms before 2026-12-06: about 250 wake-ups in 5 s,
# 3-4 % of a compute-bound thread's time on that node under TCG).  Then
# SIGINT (Ctrl-C) at the launcher ends the job everywhere: status 130.
test_sigint() {
	local rc=0 m0 m1 w0 w1
	launch sigint sleep
	sleeping sigint || { log "the job did not start"; rc=1; }
	# Workers are up once main runs.
	sleep 2
	m0=$(stat_sum cost_msgs) || rc=1
	w0=$(sleeps "$lpid")
	sleep 5
	w1=$(sleeps "$lpid")
	m1=$(stat_sum cost_msgs) || rc=1
	log "coherence messages in 5 s of a waiting job: $((m1 - m0)) (want at most 5)"
	[ $((m1 - m0)) -le 5 ] || rc=1
	log "wake-ups of the launcher's threads in those 5 s: $((w1 - w0)) (want at most 60)"
	[ "$w0" -gt 0 ] && [ $((w1 - w0)) -le 60 ] || rc=1
	kill -INT "$lpid"
	finish sigint 60
	[ "$st" = 130 ] || { log "want status 130"; rc=1; }
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# A thread that frees, block by block, what main allocated, while main
# keeps allocating (and so looks at its list of blocks other nodes freed),
# hands the blocks over a batch at a time (shim_free_remote()): 400 such
# frees from node 1 cost the cluster fewer than 400 coherence messages more
# than a run of the same job with none.  (One at a time, the list's page
# went to node 1 and back for each block: about 7 messages a block.)
test_free_batched() {
	local rc=0 m0 m1 m2
	m0=$(stat_sum cost_msgs) || return 1
	launch fs0 freestream 0
	finish fs0 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	m1=$(stat_sum cost_msgs) || return 1
	launch fs freestream 400
	finish fs 300
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	has_line "$T/fs.out" "freestream 400 freed on node 1" \
		"the frees were not made on node 1" || rc=1
	m2=$(stat_sum cost_msgs) || return 1
	log "coherence messages of the job: $((m1 - m0)) without frees, $((m2 - m1)) with 400 (want fewer than 400 more)"
	[ $((m2 - m1 - (m1 - m0))) -lt 400 ] || rc=1
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Without a memory policy a job's pages are homed at their first touch
# (first-touch), as Linux places memory, and node K manages its heap P.hK:
# its own first touches ask nobody.  A policy given is used as given, with
# node K as manager where the policy leaves homes to first touch (-l, -m);
# an interleaved heap computes every home and has none.
test_heap_homes() {
	local rc=0 k opt pol want mgr wmgr
	for opt in "" -l "-m 1,2" -i1,2; do
		LOPTS=$opt launch "heap$opt" sleep
		sleeping "heap$opt"
		for k in $(nodes); do
			pol=$(region_attr "j.$SDSM_NODE_ID.$lpid.h$k" policy)
			mgr=$(region_attr "j.$SDSM_NODE_ID.$lpid.h$k" manager)
			want=first-touch
			wmgr=$k
			case $opt in
			-m*) want="bind nodemask=0x6" ;;
			-i*) want="interleave nodemask=0x6 block_size=4096"
			     wmgr=interleave ;;
			esac
			[ "$pol" = "$want" ] && [ "$mgr" = "$wmgr" ] ||
				{ log "sdsmctl -N all $opt: heap of node $k: '$pol' manager '$mgr', want '$want' manager '$wmgr'"; rc=1; }
		done
		kill -INT "$lpid"
		finish "heap$opt" 60
		[ "$st" = 130 ] || { log "want status 130"; rc=1; }
		nothing_left "$lpid" || rc=1
	done
	return "$rc"
}

# A binary only this node has: a message naming the node and the path.
test_missing_binary() {
	local rc=0 t0 ms
	cp "$PROG" /tmp/shim_prog
	t0=$(vc_now_ms)
	"$SDSMCTL" -N all -- /tmp/shim_prog run > "$T/miss.out" 2> "$T/miss.err"
	st=$?
	ms=$(($(vc_now_ms) - t0))
	log "missing: status $st in $ms ms; stderr: $(tr '\n' '|' < "$T/miss.err")"
	rm -f /tmp/shim_prog
	[ "$st" = 127 ] || { log "want status 127"; rc=1; }
	grep -q 'node [12]: cannot run /tmp/shim_prog: No such file' "$T/miss.err" ||
		{ log "no message naming the node and path"; rc=1; }
	grep -q '^thread' "$T/miss.out" && { log "the program ran"; rc=1; }
	return "$rc"
}

# sdsmd runs its workers as root, so it takes jobs from root only: its
# inbox is root's, mode 0600 (issue 13).  A user who may open /dev/sdsm
# (uid 4001 here) is refused with status 125 and a message, and nothing
# of the job runs.
test_not_root() {
	local rc=0 mode
	mode=$(stat -c %a /dev/sdsm) || return 1
	chmod 0666 /dev/sdsm || return 1
	setpriv --reuid=4001 --regid=4001 --clear-groups \
		"$SDSMCTL" -N all -- "$PROG" run > "$T/nr.out" 2> "$T/nr.err"
	st=$?
	chmod "$mode" /dev/sdsm || rc=1
	log "not root: status $st; stderr: $(tr '\n' '|' < "$T/nr.err")"
	[ "$st" = 125 ] || { log "want status 125"; rc=1; }
	grep -q 'node [12]: sdsmd takes jobs from root only: .*Permission denied' \
		"$T/nr.err" || { log "no message saying why"; rc=1; }
	grep -q '^thread' "$T/nr.out" && { log "the program ran"; rc=1; }
	return "$rc"
}

# fork, system, popen, posix_spawnp, execl, vfork(2) and clone(2) without
# CLONE_VM in a job: each fails with ENOSYS (38) and a line naming the
# call; the job goes on and ends with 0.
test_spawn() {
	local rc=0 call
	launch spawn spawn
	finish spawn 120
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	for call in 'fork -1 errno 38' 'system -1 errno 38' \
		'popen NULL errno 38' 'posix_spawnp 38' 'execl -1 errno 38' \
		'vfork -1 errno 38' 'clone -1 errno 38'; do
		grep -qx "$call" "$T/spawn.out" || { log "want '$call'"; rc=1; }
	done
	for call in 'fork()' 'system()' 'popen()' 'posix_spawnp()' 'execl()' \
		'vfork()' 'clone() without CLONE_VM'; do
		grep -qF "sdsm: $call is not supported in a job" "$T/spawn.err" ||
			{ log "no message naming $call"; rc=1; }
	done
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Threads made and joined one after the other reuse the stacks of those
# that ended: 600 on node 0 alone (-N 0), more than its heap holds stacks
# of 2 MiB (before, the 493rd pthread_create failed).  Calls that take a
# pthread_t work on the thread's own handle (pthread_self()) on every node
# (before, glibc was given the job's handle: pthread_getattr_np() reported
# no stack of the thread's); on a thread of another node they are refused,
# naming the call, and so are robust and PI mutexes in job memory.
# main()'s pthread_t is a handle of the job: a thread on node 2 signals
# main() on node 0 with it.  29 rounds over 3 nodes (the first thread on
# node 1) put the named pair on nodes 0 and 1 and the signaller on 2.
test_thread_churn() {
	local native rc=0 k line want
	native=$("$PROG" churn 600 | head -n 1)
	LOPTS="-N 0" launch churn1 churn 600
	finish churn1 300
	[ "$st" = 0 ] || { log "-N 0: want status 0"; rc=1; }
	has_line "$T/churn1.out" "$native" "-N 0: want '$native'" || rc=1
	has_line "$T/churn1.out" "churn node 0 threads 600" \
		"-N 0: want 600 threads on node 0" || rc=1
	native=$("$PROG" churn 29 | head -n 1)
	launch churn3 churn 29
	finish churn3 200
	[ "$st" = 0 ] || { log "want status 0"; rc=1; }
	# Thread 32 of the job is on node 2; main()'s handle means main()
	# there too (before, it was node 2's own main thread).
	for line in "$native" 'setname 0 95' 'robust 95 pi 95' \
		'main-kill 0 from node 2 handled on node 0 self 1'; do
		has_line "$T/churn3.out" "$line" "want '$line'" || rc=1
	done
	for k in 0 1 2; do
		want=10
		[ "$k" = 0 ] && want=9
		has_line "$T/churn3.out" "churn node $k threads $want" \
			"want $want threads on node $k" || rc=1
	done
	for line in 'pthread_setname_np() of a thread on node 1' \
		'pthread_mutex_init() of a robust mutex' \
		'pthread_mutex_init() of a priority-inheritance mutex'; do
		grep -qF "sdsm: $line is not supported in a job" \
			"$T/churn3.err" || { log "no message '$line'"; rc=1; }
	done
	nothing_left "$lpid" || rc=1
	return "$rc"
}

# Node 2 dies (eth0 down) while threads on nodes 0, 1 and 2 take turns on a
# mutex: the job ends with 125 and a message about node 2 within the peer
# timeout, and no process of it is left on nodes 0, 1 and 2 (every
# supervisor sees a node of the job down and kills its worker).  The
# job's regions cannot be destroyed on a node that is down: they are not
# checked here, and the module is reloaded everywhere afterwards.
test_node_dies() {
	local rc=0 i left seen
	launch dies busy
	printed_soon dies busy 120 || { log "the job did not get busy"; finish dies 5; return 1; }
	log "node 2: eth0 down"
	run_on 2 ip link set eth0 down
	finish dies 120
	[ "$st" = 125 ] || { log "want status 125"; rc=1; }
	grep -q 'node 2 is down\|(nodes down: .*2' "$T/dies.err" ||
		{ log "no message about node 2"; rc=1; }
	for ((i = 0; i < 30; i++)); do
		left="$(shim_procs 1)$(shim_procs 2)"
		[ -z "$left" ] && break
		sleep 1
	done
	[ -z "$left" ] || { log "workers left after the job: $left"; rc=1; }
	# What node 0 shows of the dead node 2: never "up" again.
	seen=
	for ((i = 0; i < 20; i++)); do
		seen="$seen $(run_on 0 cat /sys/kernel/sdsm/nodes/2/state)"
		sleep 0.25
	done
	log "node 0 saw node 2:$(tr ' ' '\n' <<< "${seen# }" | uniq -c | tr -s ' \n' ' ')"
	case "$seen " in *" up "*) log "node 2 up again"; rc=1 ;; esac
	[ "$rc" = 0 ] || agent_logs
	return "$rc"
}

restore_cluster() {
	local k rc=0
	# A test that overran its bound may leave its job behind: end it, so
	# that the next test starts clean (the test has failed already).
	# (a name is at most 15 characters, as pkill -x matches it)
	par_on_nodes vc_pkill shim_prog shim_sync_prog || rc=1
	if [ "$TEST" = heap_limit ]; then
		reload_node $((N - 1)) > /dev/null || rc=1
	fi
	if [ "$TEST" = node_dies ]; then
		stop_agents
		for k in $(nodes); do
			run_on "$k" "$NODE_SH" restore > /dev/null || rc=1
		done
		for k in $(nodes); do
			run_on "$k" "$NODE_SH" unload 60 > /dev/null || rc=1
		done
		for k in $(nodes); do
			run_on "$k" "$NODE_SH" load > /dev/null || rc=1
		done
	fi
	cluster_ready ||
		par_on_nodes "$NODE_SH" wait_all_up 60 > /dev/null || rc=1
	[ "$TEST" = node_dies ] && { start_agents || rc=1; }
	return "$rc"
}

tap_before_test() {
	TEST=$1
}

tests=${*:-$ALL_TESTS}
if [ "$N" -lt 3 ]; then
	# shellcheck disable=SC2086
	tap_skip_all "needs 3 nodes" $tests
	exit 0
fi
case " $tests " in
*" agents "*) ;;
*) start_agents ;;
esac
# shellcheck disable=SC2086
run_tap_tests $tests
rc=$?
stop_agents
rm -rf "$T"
exit $rc
