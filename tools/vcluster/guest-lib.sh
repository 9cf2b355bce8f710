# SPDX-License-Identifier: GPL-2.0
#
# guest-lib.sh - shell helpers for test scripts running inside a vcluster
# guest.  Source it from sh (busybox) or bash:
#
#	. "$SDSM_ROOT/tools/vcluster/guest-lib.sh"
#
# Functions (see Documentation/vcluster.rst):
#	on_node K CMD [ARGS...]		run CMD on node K, print its output,
#					return its status (124 on timeout)
#	vc_now, vc_now_ms		the time in seconds, milliseconds
#	wait_until SEC CMD [ARGS...]	retry CMD until it succeeds or SEC pass
#	cluster_barrier NAME [SEC]	meet every node that runs the test command
#	sdsm_load [PARAM=VALUE...]	insmod sdsm with this node's parameters
#	sdsm_unload			rmmod sdsm, bounded
#	sdsm_ready			eth0, rxe0, sdsm and every peer up
#	vc_eth0_up, vc_rxe0_active, sdsm_all_up	its three parts
#	vc_pkill NAME...		SIGKILL every process named NAME
#	power_cut K			node K loses power (its QEMU killed)
#	power_on K			node K boots again, loads sdsm
#
# How on_node works: every node runs an agent (vc_agent, started by
# guest-init) that looks in $SDSM_SHARED/.vcluster/q/nodeK for request
# files when its doorbell rings (vcluster-hub writes a newline to the
# node's ttyS1 for each file written there; without it, it polls).
# A caller writes a request (the count of arguments, its cwd and each
# argument, NUL-terminated) straight into the queue as q/nodeK/ID; the
# agent runs it once it has read every field the count promises (a
# request still being written is left for its own bell), in the
# background, in a subshell of its own process group, with output to
# done/ID.out; the subshell writes the status line to done/ID.rc as it
# exits, which the caller waits for.  A caller that gives up drops a file
# in cancel/ and the runner kills the process group.  The agent remembers
# the requests it has run and deletes their files in one rm once it has
# been idle for about 10 s or holds 64 of them; output and status files
# stay for the life of the cluster.  No exec on the way: a rename (mv) per
# request cost 80-160 ms.
# The agent itself is tools/vcluster/guest-agent (bash).

: "${ON_NODE_TIMEOUT:=120}"
: "${SDSM_RMMOD_TIMEOUT:=60}"
: "${SDSM_INSMOD_TIMEOUT:=60}"

vc_msg() {
	echo "vcluster: $*" >&2
}

# Every guest polls files all the time (its agent, its init, callers of
# on_node), and under TCG one fork+exec costs 100-500 ms of guest CPU: a
# polling loop that runs `sleep` and `date` would eat the whole vCPU.  So in
# bash the clock is $EPOCHSECONDS and vc_sleep waits in `read -t` on a FIFO
# that nobody writes, neither of which forks; other shells fall back to the
# commands.
if [ -n "${BASH_VERSION:-}" ] && [ -n "${EPOCHSECONDS:-}" ]; then
	vc_now() {
		echo "$EPOCHSECONDS"
	}
	vc_now_ms() {
		_vc_us=${EPOCHREALTIME/[.,]/}
		echo $((_vc_us / 1000))
	}
	_vc_fifo=/run/vcluster-sleep.fifo
	[ -p "$_vc_fifo" ] || mkfifo -m 600 "$_vc_fifo" 2>/dev/null
	# shellcheck disable=SC3020 # bash only, inside the BASH_VERSION test
	if [ -p "$_vc_fifo" ] && { exec {_vc_sleep_fd}<>"$_vc_fifo"; } 2>/dev/null; then
		vc_sleep() {
			read -r -t "$1" -u "$_vc_sleep_fd" _ 2>/dev/null
			return 0
		}
	else
		vc_sleep() {
			sleep "$1"
		}
	fi
	# _vc_clock: set _vc_t to the time in seconds.
	_vc_clock() {
		_vc_t=$EPOCHSECONDS
	}
else
	vc_now() {
		date +%s
	}
	vc_now_ms() {
		echo $(($(date +%s%N) / 1000000))
	}
	vc_sleep() {
		sleep "$1"
	}
	_vc_clock() {
		_vc_t=$(date +%s)
	}
fi

# vc_backoff MAX: the next pause of a poll that backs off, in _vc_bo
# (0.02 s first, set by the caller, then 0.05 s ten times, 0.1 and MAX;
# MAX is 0.1 or more).  A command that ends at once is seen at once, one
# that takes a few tenths (an exec under TCG) is seen within 0.05 s, and
# one that runs long costs a few polls more than a fixed MAX would.
vc_backoff() {
	case "$_vc_bo" in
	0.02) _vc_bo=0.05 _vc_bo_n=1 ;;
	0.05) _vc_bo_n=$((_vc_bo_n + 1))
		[ "$_vc_bo_n" -le 10 ] || _vc_bo=0.1 ;;
	*) _vc_bo=$1 ;;
	esac
}

# Pauses that an event ends (bash only).  A poll that has gone on for
# VC_PAUSE_AFTER (2) seconds stops polling: the waiter sleeps in the
# `wait` builtin, which a trapped signal interrupts, for a ticker child of
# its own that sends it SIGURG every VC_PAUSE_TICK (2) seconds, and
# whoever makes its condition true may end the pause at once with
# SIGWINCH (vc_wake PID): the agent of the caller's node for an on_node
# answer (vcluster-hub tells it, see vc_agent), selftests' bg for a job in
# the background.  So a long wait costs a look every 2 s instead of four
# a second, each a lookup over 9p and a few ms of the guest's CPU under
# TCG (nine waiters on node 0 took it a sixth of its CPU in the futex
# stress), and ends when its event comes, not at the next look.  The
# traps are set only while the waiter sleeps in `wait`: a signal that
# comes between (its condition is being tested, which may itself use
# `wait`) or after the pause, or to a process that is not waiting, is
# ignored, as both are by default; a tick or a wake lost so costs at
# most one tick.  Not for dash or busybox sh, which poll as before.
: "${VC_PAUSE_AFTER:=2}"
: "${VC_PAUSE_TICK:=2}"

# _vc_paused START [PID]: pause, if the wait that began at START (in
# seconds) may: sleep in `wait PID` (default: the ticker's) until a tick,
# a wake or PID's end, and succeed; else fail, and the caller polls.  Its
# state is in the caller's locals: _vc_tick, the ticker's pid (started
# here, ended by _vc_pause_stop), and _vc_polls, set once pausing has
# failed (outside bash; no fork; a ticker killed by someone else).
# _vc_wakes counts the wakes this shell got while paused.
_vc_paused() {
	if [ -z "${_vc_tick:-}" ]; then
		[ -z "${_vc_polls:-}" ] && [ -n "${BASH_VERSION:-}" ] &&
			[ -n "${_vc_sleep_fd:-}" ] || return 1
		_vc_clock
		[ $((_vc_t - $1)) -ge "$VC_PAUSE_AFTER" ] || return 1
		_vc_me=$BASHPID
		(
			while vc_sleep "$VC_PAUSE_TICK"; do
				kill -URG "$_vc_me" 2>/dev/null || exit 0
			done
		) < /dev/null > /dev/null 2>&1 &
		_vc_tick=$!
	fi
	trap : URG
	trap '_vc_wakes=$((${_vc_wakes:-0} + 1))' WINCH
	wait "${2:-$_vc_tick}" 2>/dev/null
	trap - URG WINCH
	if ! kill -0 "$_vc_tick" 2>/dev/null; then
		wait "$_vc_tick" 2>/dev/null
		_vc_tick='' _vc_polls=1
	fi
	return 0
}

# _vc_pause_stop: end the caller's ticker, if it has one.
_vc_pause_stop() {
	[ -n "${_vc_tick:-}" ] || return 0
	kill "$_vc_tick" 2>/dev/null
	wait "$_vc_tick" 2>/dev/null
	_vc_tick=
}

# vc_wake PID: end a pause of process PID at once (see above); harmless
# to a process that is not in one.
vc_wake() {
	kill -WINCH "$1" 2>/dev/null
	return 0
}

# vc_killpg PID: SIGKILL to process group PID; fails if there is none.
# Not bash's builtin kill: for -PID of one of its jobs it signals the group
# the job was started in, and a job started where job control is off (in
# a subshell) is in the caller's group, so the caller would kill itself.
vc_killpg() {
	if [ -n "${BASH_VERSION:-}" ] && [ -x /bin/kill ]; then
		/bin/kill -KILL -- "-$1" 2>/dev/null
	else
		kill -KILL -- "-$1" 2>/dev/null
	fi
}

# vc_pkill NAME...: SIGKILL to every process named NAME (its comm, at most
# 15 characters, as pkill -x matches it), found with builtins: no exec, so
# on_node K vc_pkill costs what an on_node of nothing does.
vc_pkill() {
	for _pk_d in /proc/[0-9]*; do
		read -r _pk_c 2>/dev/null < "$_pk_d/comm" || continue
		for _pk_n in "$@"; do
			[ "$_pk_c" = "$_pk_n" ] &&
				kill -KILL "${_pk_d#/proc/}" 2>/dev/null
		done
	done
	return 0
}

# vc_bounded SEC CMD [ARGS...]: run CMD, return its status, or 124 after
# SEC seconds without waiting for it (a task stuck in the kernel cannot be
# killed, and waiting for it would hang the caller too).  From bash, CMD
# runs in a process group of its own, killed when CMD ends or times out:
# nothing CMD started in the background outlives it (a leftover holding
# the caller's stdout would keep a pipe reading it open forever).
#
# bash gives a background job its own group under set -m without a tty;
# dash and busybox sh refuse, and run CMD in the caller's group, as does
# bash in a subshell, where $- may show m with job control off.  In bash
# the job's group is read from /proc as it starts, and the job is watched
# with builtins only (kill -0, wait): no status file to create and delete
# and no /bin/kill, three execs fewer, about 0.2 s of a TCG guest's CPU
# in every call (make check makes two a test).  Other shells write the
# status to a file.
vc_bounded() {
	local _vc_tick='' _vc_polls=''
	_b_to=$1
	shift
	if [ -z "${BASH_VERSION:-}" ]; then
		_vc_bounded_file "$@"
		return
	fi
	case $- in
	*m*) "$@" & ;;
	*)	set -m
		"$@" &
		set +m ;;
	esac
	_b_pid=$!
	# The job's process group: its own (a group to kill when it ends),
	# the caller's (nothing to kill: the caller's is not ours), or
	# unknown if it is gone already (then /bin/kill, which fails
	# harmlessly where there is no such group).
	_b_grp=
	if read -r _b_s 2>/dev/null < "/proc/$_b_pid/stat"; then
		_b_s=${_b_s##*) }
		_b_s=${_b_s#* * }
		_b_grp=${_b_s%% *}
	fi
	_vc_clock
	_b_start=$_vc_t
	_b_end=$((_vc_t + _b_to))
	_vc_bo=0.02
	# bash reaps its children as they exit (SIGCHLD), so kill -0 fails
	# once CMD has ended and wait gives its status.  After VC_PAUSE_AFTER
	# seconds it waits for CMD in `wait`, which CMD's end or a tick ends.
	while kill -0 "$_b_pid" 2>/dev/null; do
		_vc_clock
		if [ "$_vc_t" -ge "$_b_end" ]; then
			_vc_pause_stop
			vc_killpg "$_b_pid" ||
				kill -KILL "$_b_pid" 2>/dev/null
			return 124
		fi
		if ! _vc_paused "$_b_start" "$_b_pid"; then
			vc_sleep "$_vc_bo"
			vc_backoff 0.2
		fi
	done
	_vc_pause_stop
	wait "$_b_pid" 2>/dev/null
	_b_rc=$?
	if [ "$_b_grp" = "$_b_pid" ]; then
		kill -KILL -- "-$_b_pid" 2>/dev/null
	elif [ -z "$_b_grp" ]; then
		vc_killpg "$_b_pid"
	fi
	return "$_b_rc"
}

# _vc_bounded_file CMD [ARGS...]: vc_bounded outside bash, with _b_to
# set.  CMD's status goes to an empty file, in one write (vc_status).
_vc_bounded_file() {
	_b_st=$(mktemp /tmp/.vcluster-bounded.XXXXXX) || return 125
	# The job keeps the file's name in _b_f: a CMD that calls
	# vc_bounded itself sets _b_st in its shell.
	( _b_f=$_b_st; "$@"; echo $? > "$_b_f" ) &
	_b_pid=$!
	_vc_clock
	_b_end=$((_vc_t + _b_to))
	_vc_bo=0.02
	until vc_status "$_b_st"; do
		_vc_clock
		if [ "$_vc_t" -ge "$_b_end" ]; then
			vc_killpg "$_b_pid" ||
				kill -KILL "$_b_pid" 2>/dev/null
			rm -f "$_b_st"
			return 124
		fi
		vc_sleep "$_vc_bo"
		vc_backoff 0.2
	done
	_b_rc=$_vc_rc
	rm -f "$_b_st"
	vc_killpg "$_b_pid"
	wait "$_b_pid" 2>/dev/null
	return "$_b_rc"
}

# wait_until TIMEOUT_SEC CMD [ARGS...]: true once CMD is, false after
# TIMEOUT_SEC seconds.  CMD may itself wait_until (on_node does): the
# state of each is local.  After VC_PAUSE_AFTER seconds it pauses between
# looks (see above), so whoever makes CMD true may vc_wake it.
wait_until() {
	local _wu_end _wu_start _vc_tick='' _vc_polls=''
	_vc_clock
	_wu_start=$_vc_t
	_wu_end=$((_vc_t + $1))
	shift
	_vc_bo=0.02
	while :; do
		if "$@"; then
			_vc_pause_stop
			return 0
		fi
		_vc_clock
		if [ "$_vc_t" -ge "$_wu_end" ]; then
			_vc_pause_stop
			return 1
		fi
		if ! _vc_paused "$_wu_start"; then
			vc_sleep "$_vc_bo"
			vc_backoff 0.25
		fi
	done
}

# vc_qdir: set _vc_q to the cluster's control directory (no fork).
vc_qdir() {
	_vc_q=$SDSM_SHARED/.vcluster
}

# power_cut K: node K loses power: the host kills its QEMU at once, with
# no shutdown, no rmmod and no goodbye to its peers.  Its kernel log so
# far is saved first, as dmesg.cutN.log in its output dir, where the host
# checks it with the others.  Not for a node that runs the test command.
# Returns 0 once the node is off, else says why and returns 1 (124: no
# answer).  What node K was running for on_node never answers: its
# callers time out, or should be killed by the test.
power_cut() {
	_pw_n=$(cat "/tmp/.vcluster-cuts-$1" 2>/dev/null || echo 0)
	_pw_n=$((_pw_n + 1))
	echo "$_pw_n" > "/tmp/.vcluster-cuts-$1"
	ON_NODE_TIMEOUT=30 on_node "$1" sh -c \
		'dmesg > "$SDSM_OUT/../dmesg.cut$1.log"' sh "$_pw_n" ||
		vc_msg "power_cut: node $1's kernel log not saved"
	_vc_power cut "$1" 60
}

# power_on K: node K, off after power_cut, boots again as at the start of
# the cluster and loads sdsm (a new incarnation).  Returns 0 once it has,
# else says why and returns 1 (124: no answer).
power_on() {
	_vc_power on "$1" "${VC_POWER_ON_TIMEOUT:-900}"
}

# _vc_power cut|on K SEC: ask the host (tools/vcluster/vcluster, "power
# cuts") and wait for its answer.
_vc_power() {
	vc_qdir
	_pw_dir=$_vc_q/power
	rm -f "$_pw_dir/$1.$2.done"
	if ! : > "$_pw_dir/$1.$2.new" ||
	   ! mv "$_pw_dir/$1.$2.new" "$_pw_dir/$1.$2"; then
		vc_msg "power $1 $2: cannot ask the host"
		return 1
	fi
	if ! wait_until "$3" test -e "$_pw_dir/$1.$2.done"; then
		vc_msg "power $1 $2: no answer from the host in $3 s"
		return 124
	fi
	_pw_ans=$(cat "$_pw_dir/$1.$2.done")
	rm -f "$_pw_dir/$1.$2.done"
	[ "$_pw_ans" = ok ] && return 0
	vc_msg "power $1 $2: $_pw_ans"
	return 1
}

# on_node K CMD [ARGS...]
on_node() {
	if [ $# -lt 2 ]; then
		vc_msg "usage: on_node K CMD [ARGS...]"
		return 2
	fi
	_on_k=$1
	shift
	case "$_on_k" in
	''|*[!0-9]*)
		vc_msg "on_node: bad node '$_on_k'"
		return 2 ;;
	esac
	if [ "$_on_k" -ge "$SDSM_NR_NODES" ]; then
		vc_msg "on_node: node $_on_k does not exist (cluster has $SDSM_NR_NODES)"
		return 2
	fi
	vc_qdir
	_on_q=$_vc_q
	if [ -n "${EPOCHREALTIME:-}" ]; then
		_on_id="${EPOCHREALTIME/./}-$SDSM_NODE_ID-$BASHPID-$RANDOM$RANDOM"
	else
		_on_id="$(date +%s%N)-$SDSM_NODE_ID-$$-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
	fi
	# The request is one file: the count of arguments, the cwd, then each
	# argument, NUL-terminated (see the top of this file).
	if ! printf '%s\0' "$#" "${PWD:-/}" "$@" > "$_on_q/q/node$_on_k/$_on_id"; then
		rm -f "$_on_q/q/node$_on_k/$_on_id"
		vc_msg "on_node: cannot queue the request"
		return 125
	fi
	if ! wait_until "$ON_NODE_TIMEOUT" vc_on_done "$_on_q/done/$_on_id"; then
		vc_msg "on_node $_on_k: timed out after ${ON_NODE_TIMEOUT}s: $*"
		: > "$_on_q/cancel/$_on_id"
		return 124
	fi
	vc_cat "$_on_q/done/$_on_id.out"
	return "$_on_rc"
}

# vc_status FILE: true once FILE holds a status line (sets _vc_rc).  Its
# writer writes the status and its newline in one write, once the command
# is over, so a line without its newline is not there yet.
vc_status() {
	IFS= read -r _vc_rc 2>/dev/null < "$1" && [ -n "$_vc_rc" ]
}

# vc_on_done PREFIX: true once the agent has written PREFIX.rc (sets _on_rc)
# after the output is complete.
vc_on_done() {
	vc_status "$1.rc" && _on_rc=$_vc_rc
}

# vc_cat FILE: cat without an exec in bash (see vc_sleep).
vc_cat() {
	if [ -n "${BASH_VERSION:-}" ]; then
		while IFS= read -r _vc_l; do
			printf '%s\n' "$_vc_l"
		done < "$1"
		printf '%s' "$_vc_l"
	else
		cat "$1"
	fi
}

# cluster_barrier NAME [TIMEOUT_SEC]: every node in $SDSM_CMD_NODES arrives
# before any leaves.  A per-node generation count (in the node's own /tmp)
# makes a NAME reusable.
cluster_barrier() {
	_cb_name=$1
	_cb_to=${2:-120}
	case "$_cb_name" in
	''|*/*)
		vc_msg "cluster_barrier: bad name '$_cb_name'"
		return 2 ;;
	esac
	_cb_genf="/tmp/.vcluster-barrier-$_cb_name"
	_cb_gen=$(cat "$_cb_genf" 2>/dev/null || echo 0)
	_cb_gen=$((_cb_gen + 1))
	echo "$_cb_gen" > "$_cb_genf"
	vc_qdir
	_cb_dir="$_vc_q/barrier/$_cb_name.$_cb_gen"
	mkdir -p "$_cb_dir"
	: > "$_cb_dir/node$SDSM_NODE_ID"
	if ! wait_until "$_cb_to" vc_barrier_full "$_cb_dir"; then
		vc_msg "cluster_barrier $_cb_name: timed out after ${_cb_to}s" \
			"(arrived: $(ls "$_cb_dir" | tr '\n' ' '))"
		return 1
	fi
	return 0
}

vc_barrier_full() {
	for _bf_k in $SDSM_CMD_NODES; do
		[ -e "$1/node$_bf_k" ] || return 1
	done
	return 0
}

sdsm_loaded() {
	[ -d /sys/module/sdsm ]
}

# vc_eth0_up, vc_rxe0_active, sdsm_all_up: eth0 is up; rxe0's port is
# ACTIVE; sdsm is loaded and every other node is "up" in its sysfs.
# Builtins only (sdsm_node.sh and the cluster suites poll them).
vc_eth0_up() {
	read -r _sr_v 2>/dev/null < /sys/class/net/eth0/flags &&
		[ $((_sr_v & 1)) = 1 ]
}

vc_rxe0_active() {
	read -r _sr_v 2>/dev/null < /sys/class/infiniband/rxe0/ports/1/state &&
		[ "$_sr_v" = "4: ACTIVE" ]
}

sdsm_all_up() {
	[ -d /sys/kernel/sdsm/nodes ] || return 1
	_sr_k=0
	while [ "$_sr_k" -lt "$SDSM_NR_NODES" ]; do
		if [ "$_sr_k" != "$SDSM_NODE_ID" ]; then
			read -r _sr_v 2>/dev/null < "/sys/kernel/sdsm/nodes/$_sr_k/state" &&
				[ "$_sr_v" = up ] || return 1
		fi
		_sr_k=$((_sr_k + 1))
	done
}

# sdsm_ready: this node is as a cluster test expects to find it: all three
# of the above.  on_node K sdsm_ready (a function of the agent's library:
# no exec) costs about 0.15 s under TCG; the suites ask it of every node
# after each test before restoring anything.
sdsm_ready() {
	vc_eth0_up && vc_rxe0_active && sdsm_all_up
}

# sdsm_load [PARAM=VALUE...]
sdsm_load() {
	if [ ! -f "$SDSM_KO" ]; then
		vc_msg "sdsm_load: $SDSM_KO not found (run 'make module')"
		return 1
	fi
	# SDSM_MODULE_ARGS is a word list on purpose.
	# shellcheck disable=SC2086
	vc_bounded "$SDSM_INSMOD_TIMEOUT" insmod "$SDSM_KO" \
		node_id="$SDSM_NODE_ID" nodes="$SDSM_NODES" \
		$SDSM_MODULE_ARGS "$@"
	_sl_rc=$?
	if [ $_sl_rc -eq 124 ]; then
		vc_msg "sdsm_load: insmod did not finish in ${SDSM_INSMOD_TIMEOUT}s"
	elif [ $_sl_rc -ne 0 ]; then
		vc_msg "sdsm_load: insmod failed ($_sl_rc)"
	fi
	return $_sl_rc
}

sdsm_unload() {
	if ! sdsm_loaded; then
		vc_msg "sdsm_unload: sdsm is not loaded"
		return 1
	fi
	vc_bounded "$SDSM_RMMOD_TIMEOUT" rmmod sdsm
	_su_rc=$?
	if [ $_su_rc -eq 124 ]; then
		vc_msg "sdsm_unload: rmmod did not finish in ${SDSM_RMMOD_TIMEOUT}s"
	elif [ $_su_rc -ne 0 ]; then
		vc_msg "sdsm_unload: rmmod failed ($_su_rc)"
	fi
	return $_su_rc
}
