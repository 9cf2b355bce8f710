#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sdsm_node.sh - node-local helpers for run_cluster_tests.sh, run on any
# node of a vcluster (directly or through on_node).  Every wait is bounded.
#
#   sdsm_node.sh state K              print node K's state as seen here
#   sdsm_node.sh states               print "K=state" for every node
#   sdsm_node.sh wait_all_up SEC      every other node "up"; prints ms
#   sdsm_node.sh wait_not_up K SEC    node K not "up" (down or connecting)
#   sdsm_node.sh counters K           tx_msgs rx_msgs tx_bytes rx_bytes rtt_us
#   sdsm_node.sh counters_all         "K tx_msgs ... rtt_us" for every other K
#   sdsm_node.sh unload SEC           rmmod, bounded; prints ms
#   sdsm_node.sh load [PARAM=V...]    insmod with this node's parameters
#   sdsm_node.sh restore              eth0 up, rxe0 present, sdsm loaded
#   sdsm_node.sh restore_up SEC       restore, then wait_all_up SEC
#   sdsm_node.sh drop_frames SEC [STOP]  eth0 drops every frame, both
#                                     ways, for SEC seconds (tc), or until
#                                     file STOP exists, then no more
#   sdsm_node.sh dmesg_since MARK     kernel log lines after the last marker MARK
#   sdsm_node.sh mark MARK            write marker MARK to the kernel log
#   sdsm_node.sh stat NAME            print stats/NAME
#   sdsm_node.sh wait_stat NAME MIN SEC  stats/NAME at least MIN; prints ms

set -u
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || exit 2

SYS=/sys/kernel/sdsm

# Under TCG a fork+exec costs a tenth of a second and more, and the
# cluster suites call restore_up and wait_all_up after every test: the
# states, eth0's flags and rxe0's port are read with builtins.

# state_of K: node K's state as seen here, in $st.
state_of() {
	read -r st 2>/dev/null < "$SYS/nodes/$1/state" || st=absent
}

state() {
	state_of "$1"
	echo "$st"
}

states() {
	local k out=
	for ((k = 0; k < SDSM_NR_NODES; k++)); do
		state_of "$k"
		out="$out $k=$st"
	done
	echo "${out# }"
}

not_up() {
	state_of "$1"
	[ "$st" != up ]
}

restore() {
	local rc=0

	# rxe0 accepts no connection after eth0 went down and up (Debian 6.1
	# rxe, with or without sdsm): a test that took eth0 down gets rxe0
	# made again.
	if ! vc_eth0_up; then
		ip link set eth0 up || rc=1
		rdma link delete rxe0 2>/dev/null
	fi
	if [ ! -d /sys/class/infiniband/rxe0/ports/1 ]; then
		rdma link add rxe0 type rxe netdev eth0 || rc=1
	fi
	wait_until 30 vc_rxe0_active ||
		{ echo "node $SDSM_NODE_ID: rxe0 not ACTIVE"; rc=1; }
	if ! sdsm_loaded; then
		sdsm_load || rc=1
	fi
	return $rc
}

# counters K: tx_msgs rx_msgs tx_bytes rx_bytes rtt_us of node K, read
# with builtins (a cat each cost 0.2 s, 2 s for counters_all).  A file
# that cannot be read gives an empty field, so a caller's count of fields
# fails.
counters() {
	local f v out=

	for f in tx_msgs rx_msgs tx_bytes rx_bytes rtt_us; do
		read -r v 2>/dev/null < "$SYS/nodes/$1/$f" || v=
		out="$out $v"
	done
	echo "${out# }"
}

# stat_at_least NAME MIN: stats/NAME is at least MIN (in $sv), read with
# a builtin.
stat_at_least() {
	read -r sv 2>/dev/null < "$SYS/stats/$1" && [ "$sv" -ge "$2" ]
}

wait_all_up() {
	local t0

	t0=$(vc_now_ms)
	if wait_until "$1" sdsm_all_up; then
		echo "node $SDSM_NODE_ID: all up after $(( $(vc_now_ms) - t0 )) ms"
	else
		echo "node $SDSM_NODE_ID: not all up after $1 s: $(states)"
		return 1
	fi
}

cmd=${1:-}
shift || true
case "$cmd" in
state)
	state "$1" ;;
states)
	states ;;
wait_all_up)
	wait_all_up "$1" ;;
wait_not_up)
	t0=$(vc_now_ms)
	if wait_until "$2" not_up "$1"; then
		echo "node $SDSM_NODE_ID: node $1 $(state "$1") after $(( $(vc_now_ms) - t0 )) ms"
	else
		echo "node $SDSM_NODE_ID: node $1 still up after $2 s"
		exit 1
	fi ;;
counters)
	counters "$1" ;;
counters_all)
	for ((k = 0; k < SDSM_NR_NODES; k++)); do
		[ "$k" = "$SDSM_NODE_ID" ] && continue
		echo "$k $(counters "$k")"
	done ;;
unload)
	t0=$(vc_now_ms)
	SDSM_RMMOD_TIMEOUT=$1 sdsm_unload
	rc=$?
	echo "node $SDSM_NODE_ID: rmmod exit $rc after $(( $(vc_now_ms) - t0 )) ms"
	exit $rc ;;
load)
	sdsm_load "$@" ;;
restore)
	restore ;;
restore_up)
	restore && wait_all_up "$1" ;;
drop_frames)
	modprobe -q sch_netem
	modprobe -q cls_matchall
	modprobe -q act_gact
	tc qdisc add dev eth0 root netem loss 100% &&
		tc qdisc add dev eth0 ingress &&
		tc filter add dev eth0 ingress matchall action drop
	rc=$?
	if [ -n "${2:-}" ]; then
		wait_until "${1%.*}" test -e "$2"
	else
		sleep "$1"
	fi
	tc qdisc del dev eth0 root 2>/dev/null
	tc qdisc del dev eth0 ingress 2>/dev/null
	exit $rc ;;
mark)
	echo "sdsm-test: $1" > /dev/kmsg ;;
stat)
	read -r sv < "$SYS/stats/$1" && echo "$sv" ;;
wait_stat)
	t0=$(vc_now_ms)
	sv=
	if wait_until "$3" stat_at_least "$1" "$2"; then
		echo "node $SDSM_NODE_ID: $1 $sv after $(( $(vc_now_ms) - t0 )) ms"
	else
		echo "node $SDSM_NODE_ID: $1 '$sv', not $2 after $3 s"
		exit 1
	fi ;;
dmesg_since)
	# From the last marker MARK: a test run twice marks twice.
	dmesg | awk -v m="sdsm-test: $1" '
		substr($0, length($0) - length(m) + 1) == m { n = 0; seen = 1; next }
		seen { line[n++] = $0 }
		END { for (i = 0; i < n; i++) print line[i] }' ;;
*)
	echo "usage: see the top of $0" >&2
	exit 2 ;;
esac
