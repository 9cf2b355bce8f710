#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh - smoke test of the vcluster harness itself (TAP on stdout).
#
#	tools/vcluster/selftest.sh
#
# Boots a few small clusters without sdsm.ko (the 1-node ones beside the
# 2-node ones, at most 3 guests at once) and checks: rxe0 is ACTIVE, the
# guests ping each other (jumbo frames too), on_node/wait_until/
# cluster_barrier behave, --on runs on one node only, a failing command
# gives exit 1, --timeout gives 5, so does a node that does not shut down
# in time, a kernel WARNING gives 4, a guest panic ends the run with 4, bad
# usage gives 2, and no QEMU or vcluster-hub of any of these clusters is
# left behind.
# A file that is not a module (VCLUSTER_KO) checks that a failing insmod
# gives 6.  On the host: the kernel log patterns match what they must
# (sdsm's protocol errors among them) and not lines that look alike.
#
# "selftest.sh --guest" is the part that runs inside each guest.

VC_DIR=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
VC=$VC_DIR/vcluster

# --- guest part ---
if [ "${1:-}" = --guest ]; then
	# shellcheck source=tools/vcluster/guest-lib.sh
	. "$VCLUSTER_LIB"
	n=0
	fails=0
	t() {
		local desc=$1
		shift
		n=$((n + 1))
		if "$@"; then
			echo "ok $n - node$SDSM_NODE_ID: $desc"
		else
			echo "not ok $n - node$SDSM_NODE_ID: $desc"
			fails=$((fails + 1))
		fi
	}
	me=$SDSM_NODE_ID
	peer=$(( (me + 1) % SDSM_NR_NODES ))
	peer_ip=$(echo "$SDSM_NODES" | cut -d, -f$((peer + 1)))
	rxe_active() {
		rdma link show rxe0/1 | grep -q 'state ACTIVE'
	}
	ping_peer() {
		busybox ping -c 1 -W 5 "$peer_ip" > /dev/null
	}
	ping_jumbo() {
		busybox ping -c 1 -W 5 -s 8972 "$peer_ip" > /dev/null
	}
	rxe_mtu_4096() {
		ibv_devinfo -d rxe0 | grep -q 'active_mtu:.*4096'
	}
	onnode_hostname() {
		[ "$(on_node "$peer" hostname)" = "vc-node$peer" ]
	}
	onnode_self() {
		[ "$(on_node "$me" sh -c 'echo $SDSM_NODE_ID')" = "$me" ]
	}
	onnode_env() {
		[ "$(on_node "$peer" sh -c 'echo $SDSM_NODE_ID')" = "$peer" ]
	}
	onnode_status() {
		on_node "$peer" sh -c 'exit 7'
		[ $? = 7 ]
	}
	onnode_args() {
		local got
		got=$(on_node "$peer" printf '<%s>' 'a b' '' 'c
d')
		[ "$got" = "<a b><><c
d>" ]
	}
	onnode_cwd() {
		[ "$(on_node "$peer" pwd)" = "$(pwd)" ]
	}
	onnode_stderr() {
		[ "$(on_node "$peer" sh -c 'echo err >&2' 2>/dev/null)" = err ]
	}
	onnode_timeout() {
		ON_NODE_TIMEOUT=2 on_node "$peer" sleep 60 2>/dev/null
		[ $? = 124 ]
	}
	onnode_libfn() {
		on_node "$peer" wait_until 5 true
	}
	# A CMD that calls exit (here through eval) is answered with its
	# status at once, not at the caller's bound.
	onnode_exit() {
		local rc t0=$EPOCHSECONDS
		ON_NODE_TIMEOUT=20 on_node "$peer" eval 'exit 5'
		rc=$?
		[ $rc = 5 ] && [ $((EPOCHSECONDS - t0)) -lt 20 ]
	}
	# Every request runs once: a burst, a pause long enough for the
	# agent to delete the files it has run, then another burst.
	onnode_once() {
		local f=$SDSM_SHARED/once.$me i
		: > "$f"
		for i in 1 2 3 4 5 6 7 8; do
			[ "$i" != 5 ] || vc_sleep 3
			on_node "$peer" sh -c 'echo x >> "$1"' sh "$f" || return 1
		done
		vc_sleep 3
		[ "$(grep -c x "$f")" = 8 ]
	}
	# A request still being written (fewer arguments than its count) is
	# not run; once whole, it is.
	onnode_partial() {
		local id=selftest-$me-$RANDOM q
		vc_qdir
		q=$_vc_q
		printf '%s\0' 2 / echo > "$q/q/node$peer/$id" || return 1
		vc_sleep 2
		[ ! -e "$q/done/$id.rc" ] || return 1
		printf '%s\0' whole >> "$q/q/node$peer/$id" || return 1
		wait_until 20 vc_on_done "$q/done/$id" && [ "$_on_rc" = 0 ] &&
			[ "$(vc_cat "$q/done/$id.out")" = whole ]
	}
	# A caller waiting longer than VC_PAUSE_AFTER sleeps, and the
	# answer wakes it (vcluster-hub, then this node's agent), long
	# before the caller's own tick (60 s here).  A wake that lands
	# while the caller is between two sleeps is lost, which guest-lib.sh
	# allows (it costs a tick); most likely that failed this check
	# in one make check of five (ci121).  A second call may make up
	# for the first; both unwoken is a failure.
	onnode_wakes() {
		local before f=/tmp/vc-selftest-wakes i
		for i in 1 2; do
			before=${_vc_wakes:-0}
			VC_PAUSE_TICK=60 on_node "$peer" \
				sh -c 'sleep 4; echo slept' > "$f" &&
				[ "$(cat "$f")" = slept ] &&
				[ "${_vc_wakes:-0}" -gt "$before" ] && return 0
			echo "on_node's answer did not wake its caller (call $i)" >&2
		done
		return 1
	}
	onnode_badnode() {
		! on_node "$SDSM_NR_NODES" true 2>/dev/null
	}
	wait_until_false() {
		! wait_until 1 false
	}
	wait_until_later() {
		local f=/tmp/vc-selftest-flag
		rm -f "$f"
		( sleep 1; : > "$f" ) &
		wait_until 20 test -e "$f"
	}
	# A CMD that itself waits (on_node does) leaves the outer wait its
	# own bound: until 2026-12-07 the inner one's end replaced it, and
	# the outer gave up once the inner had.
	wait_until_nested() {
		local calls=0
		third_call() {
			calls=$((calls + 1))
			wait_until 1 false
			[ "$calls" -ge 3 ]
		}
		wait_until 20 third_call
	}
	bounded_status() {
		vc_bounded 20 sh -c 'exit 3'
		[ $? = 3 ]
	}
	bounded_timeout() {
		vc_bounded 2 sleep 60 2>/dev/null
		[ $? = 124 ]
	}
	# A vc_bounded inside another's CMD: the outer one answers with the
	# inner status at once, not at its own bound.
	bounded_nested() {
		local rc t0=$EPOCHSECONDS
		vc_bounded 60 vc_bounded 20 sh -c 'exit 4'
		rc=$?
		[ $rc = 4 ] && [ $((EPOCHSECONDS - t0)) -lt 20 ]
	}
	# (guest-init, PID 1, runs this command under vc_bounded: its file
	# is in use.)
	bounded_no_files() {
		local f
		for f in /tmp/.vcluster-bounded.*; do
			[ -e "$f" ] || continue
			case ${f#/tmp/} in
			.vcluster-bounded.1.*) ;;
			*) return 1 ;;
			esac
		done
	}
	barrier_twice() {
		cluster_barrier selftest 60 && cluster_barrier selftest 60
	}
	unload_absent() {
		! sdsm_unload 2>/dev/null
	}
	shared_visible() {
		echo "$me" > "$SDSM_SHARED/seen.$me"
		cluster_barrier shared 60 &&
			wait_until 10 test -e "$SDSM_SHARED/seen.$peer"
	}
	t "rxe0 is ACTIVE" rxe_active
	t "ping $peer_ip" ping_peer
	t "ping $peer_ip with 9000-byte frames" ping_jumbo
	t "rxe0 active MTU 4096" rxe_mtu_4096
	t "on_node peer hostname" onnode_hostname
	t "on_node self" onnode_self
	t "on_node env of the target node" onnode_env
	t "on_node exit status" onnode_status
	t "on_node arguments intact" onnode_args
	t "on_node cwd" onnode_cwd
	t "on_node stderr" onnode_stderr
	t "on_node timeout gives 124" onnode_timeout
	t "on_node runs library functions" onnode_libfn
	t "on_node rejects a missing node" onnode_badnode
	t "on_node answers a CMD that calls exit" onnode_exit
	t "on_node runs each request once" onnode_once
	t "on_node waits for a whole request" onnode_partial
	t "on_node's answer wakes its caller" onnode_wakes
	t "vc_bounded exit status" bounded_status
	t "vc_bounded timeout gives 124" bounded_timeout
	t "vc_bounded inside vc_bounded" bounded_nested
	t "vc_bounded leaves no file" bounded_no_files
	t "wait_until gives up" wait_until_false
	t "wait_until waits" wait_until_later
	t "wait_until inside wait_until" wait_until_nested
	t "cluster_barrier twice" barrier_twice
	t "SDSM_SHARED seen by all" shared_visible
	t "sdsm_unload without sdsm fails" unload_absent
	echo "x" > "$SDSM_OUT/guest-was-here"
	exit $((fails > 0))
fi

# --- host part ---
n=0
fails=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

WORK=$(mktemp -d /tmp/vcluster-selftest.XXXXXX) || exit 1
small=
trap '[ -n "$small" ] && kill "$small" 2> /dev/null; rm -rf "$WORK"' EXIT

# vc NAME ARGS...: run vcluster with its own out dir, keep stdout in
# WORK/NAME.out and stderr in WORK/NAME.err, return its status.
vc() {
	local name=$1
	shift
	"$VC" run --out "$WORK/$name" "$@" > "$WORK/$name.out" \
		2> "$WORK/$name.err"
}

# left_behind NAME: any process still naming this cluster's dirs?
left_behind() {
	local tmp
	tmp=$(sed -n 's/^vcluster: cluster dir //p' "$WORK/$1.err")
	ps -eo pid=,args= | grep -v grep |
		grep -F -e "$WORK/$1/" ${tmp:+-e "$tmp/"}
}

check_clean() {
	local procs
	procs=$(left_behind "$1")
	[ -z "$procs" ] || echo "# left behind: $procs"
	ok "$([ -z "$procs" ]; echo $?)" "$1: no qemu or hub left"
}

show_on_fail() {
	[ "$1" = 0 ] && return
	sed 's/^/# /' "$WORK/$2.err" | tail -n 40
}

cd "$VC_DIR/../.." || exit 1

# The patterns themselves, on the host: kernel log lines that make a log
# dirty, and lines like them that must not.
dirty_line() {
	grep -q -E -e "$(grep -v -e '^#' -e '^$' "$VC_DIR/bad-log-patterns")" \
		<<< "$1"
}
while IFS= read -r line; do
	ok "$(dirty_line "$line"; echo $?)" "dirty: $line"
done <<'EOF_DIRTY'
[   46.308364] sdsm: protocol error: READ from node 1, region 0 page 13901: READ from a sharer
[   12.100000] sdsm: release protocol error: DIFF from node 2, region 3 page 7: stale interval
[   12.200000] sdsm: protocol error: ? from node 2, region 3 page 7: not a home message
[    9.000000] WARNING: CPU: 0 PID: 212 at kmod/sdsm_mem.c:100 sdsm_fault+0x10/0x20 [sdsm]
[    9.000000] general protection fault: 0000 [#1] PREEMPT SMP NOPTI
[    9.000000] BUG: KASAN: slab-use-after-free in sdsm_rx_work+0x1/0x2 [sdsm]
EOF_DIRTY
while IFS= read -r line; do
	ok "$(! dirty_line "$line"; echo $?)" "clean: $line"
done <<'EOF_CLEAN'
[   20.000000] traps: sdsm_fuzz[311] general protection fault ip:401000 sp:7ffd0 error:0 in sdsm_fuzz
[   43.000000] sdsm: node 0: short coherence message: session reset
[   51.501236] sdsm: node 1 (198.18.0.2): connection failed before up: its session not yet reported up
EOF_CLEAN

# The NIC watcher against a fake monitor whose transmit ring never moves
# (avail 10, used 5): it must log the stall and send "stop" then "cont".
fake_monitor() {
	python3 - "$1" "$2" <<'EOF_FAKE'
import os, socket, sys
path, record = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
srv.settimeout(10)
conn, _ = srv.accept()
conn.settimeout(10)
conn.sendall(b"QEMU monitor\r\n(qemu) ")
buf = b""
with open(record, "w") as rec:
    while True:
        data = conn.recv(4096)
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            cmd = line.decode()
            rec.write(cmd + "\n")
            rec.flush()
            if cmd == "info virtio":
                out = "/machine/dev/virtio-backend [virtio-net]\r\n"
            elif cmd.startswith("info virtio-queue-element"):
                out = ("/machine/dev/virtio-backend:\r\n  avail:\r\n"
                       "    flags: 0\r\n    idx:   10\r\n  used:\r\n"
                       "    flags: 0\r\n    idx:   5\r\n")
            else:
                out = "done\r\n"
            conn.sendall(cmd.encode() + b"\r\n" + out.encode() + b"(qemu) ")
EOF_FAKE
}
fake_monitor "$WORK/fake.mon" "$WORK/fake.cmds" &
fake=$!
for ((i = 0; i < 50; i++)); do
	[ -S "$WORK/fake.mon" ] && break
	sleep 0.1
done
timeout 4 "$VC_DIR/vcluster-hmp" --watch-nic "$WORK/fake.log" "$WORK/fake.mon"
kill "$fake" 2> /dev/null
wait "$fake" 2> /dev/null
ok "$(grep -q 'fake.mon: transmit ring stalled (avail 10, used 5' "$WORK/fake.log" &&
	grep -A1 -x stop "$WORK/fake.cmds" | grep -qx cont
	echo $?)" "NIC watcher: a stalled transmit ring is logged, then stop and cont"

# The three 1-node clusters boot one after another beside the 2-node
# ones (at most 3 guests at once, one VM slot each); their checks come
# after the 2-node ones.  WORK/NAME.rc is each one's status.
(
	vc timeout -n 1 --no-module --timeout 5 -- sleep 600
	echo $? > "$WORK/timeout.rc"
	# With the NIC's virtqueue state saved, as for a stalled NIC.
	VCLUSTER_DUMP_NIC=1 vc warn -n 1 --no-module -- \
		sh -c 'echo "<4>WARNING: vcluster selftest" > /dev/kmsg'
	echo $? > "$WORK/warn.rc"
	# A text file is a module that insmod must refuse.
	VCLUSTER_KO=$VC_DIR/bad-log-patterns vc insmod -n 1 -- true
	echo $? > "$WORK/insmod.rc"
	# A shutdown slower than VCLUSTER_SHUTDOWN_TIMEOUT, as a hung rmmod
	# or leak scan is: its checks never ran.
	VCLUSTER_SHUTDOWN_TIMEOUT=5 VCLUSTER_INJECT_SHUTDOWN_DELAY=120 \
		vc slowdown -n 1 --no-module -- true
	echo $? > "$WORK/slowdown.rc"
) &
small=$!

vc guest -n 2 --no-module -- "$VC_DIR/selftest.sh" --guest
rc=$?
show_on_fail $rc guest
ok $rc "2-node guest checks exit 0"
sed -n 's/^\(not \)\{0,1\}ok [0-9]* - /&/p' "$WORK/guest.out" | sed 's/^/# /'
g_ok=$(grep -c '^ok ' "$WORK/guest.out")
g_bad=$(grep -c '^not ok ' "$WORK/guest.out")
# Each of the 2 nodes runs every check the guest part lists.
g_want=$((2 * $(grep -c '^	t "' "$VC_DIR/selftest.sh")))
ok "$([ "$g_ok" = "$g_want" ] && [ "$g_bad" = 0 ]; echo $?)" \
	"guest checks: $g_ok ok, $g_bad not ok (want $g_want, 0)"
ok "$(grep -qx '# ---- node 1 output ----' "$WORK/guest.out"; echo $?)" \
	"output block per node"
ok "$([ -f "$WORK/guest/node1/out/guest-was-here" ]; echo $?)" \
	"SDSM_OUT collected on the host"
ok "$([ -s "$WORK/guest/node0/dmesg.log" ] &&
	[ -s "$WORK/guest/node0/console.log" ] &&
	[ "$(cat "$WORK/guest/node0/rc")" = 0 ]; echo $?)" \
	"console.log, dmesg.log, rc kept"
# Each agent took its requests by the doorbell (vcluster-hub rings ttyS1),
# not by polling its queue over 9p.
ok "$(grep -q 'agent on node 0: on_node requests by doorbell' \
	"$WORK/guest/node0/console.log" &&
	grep -q 'agent on node 1: on_node requests by doorbell' \
	"$WORK/guest/node1/console.log" &&
	grep -Eq ' [1-9][0-9]* bells rung, [1-9][0-9]* callers woken' \
	"$WORK/guest/hub.log"; echo $?)" \
	"agents answer by the doorbell: $(grep -o '[0-9]* bells rung.*woken' \
	"$WORK/guest/hub.log")"
check_clean guest

vc on -n 2 --on 1 --no-module -- sh -c 'echo "id=$SDSM_NODE_ID"; exit 3'
rc=$?
ok "$([ $rc = 1 ]; echo $?)" "--on 1 with a failing command exits 1 (got $rc)"
ok "$([ "$(grep -c '^# ---- node' "$WORK/on.out")" = 1 ] &&
	grep -qx 'id=1' "$WORK/on.out"; echo $?)" "--on 1 runs on node 1 only"
check_clean on

vc panic -n 2 --on 1 --no-module -- sh -c 'echo c > /proc/sysrq-trigger; sleep 600'
rc=$?
ok "$([ $rc = 4 ]; echo $?)" "guest panic gives exit 4 (got $rc)"
ok "$(grep -q 'Kernel panic' "$WORK/panic.err"; echo $?)" \
	"panicking node's log shown"
check_clean panic

"$VC" run -n 9 -- true > /dev/null 2>&1
ok "$([ $? = 2 ]; echo $?)" "-n 9 is bad usage"
"$VC" run -n 2 --on 2 -- true > /dev/null 2>&1
ok "$([ $? = 2 ]; echo $?)" "--on 2 of 2 nodes is bad usage"
"$VC" run -n 2 > /dev/null 2>&1
ok "$([ $? = 2 ]; echo $?)" "run without a command is bad usage"

wait "$small"
small=
# bg_rc NAME: the status a 1-node cluster above ended with.
bg_rc() {
	cat "$WORK/$1.rc" 2> /dev/null || echo none
}

rc=$(bg_rc timeout)
ok "$([ "$rc" = 5 ]; echo $?)" "--timeout fires with exit 5 (got $rc)"
check_clean timeout

rc=$(bg_rc warn)
ok "$([ "$rc" = 4 ]; echo $?)" "kernel WARNING gives exit 4 (got $rc)"
ok "$(grep -q 'node 0 kernel log is DIRTY' "$WORK/warn.err"; echo $?)" \
	"dirty log banner printed"
ok "$([ "$(grep -c '^  queue_index: *[01]$' "$WORK/warn/node0/virtio-net.txt")" = 2 ] &&
	grep -q '^  device_name: *virtio-net' "$WORK/warn/node0/virtio-net.txt"
	echo $?)" "the NIC's virtqueues saved from the QEMU monitor"
check_clean warn

rc=$(bg_rc insmod)
ok "$([ "$rc" = 6 ]; echo $?)" "failing insmod gives exit 6 (got $rc)"
ok "$(grep -q 'node 0: insmod' "$WORK/insmod.err"; echo $?)" \
	"failing insmod is reported"
check_clean insmod

rc=$(bg_rc slowdown)
ok "$([ "$rc" = 5 ]; echo $?)" "a node not shut down in time gives exit 5 (got $rc)"
ok "$(grep -q 'node 0 did not shut down in 5s' "$WORK/slowdown.err"; echo $?)" \
	"the node not shut down is named"
check_clean slowdown

echo "1..$n"
exit $((fails > 0))
