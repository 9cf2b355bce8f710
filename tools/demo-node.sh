#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs on node 0 of the demo cluster (see tools/demo.sh): membership, then
# the main job: coherent memory shared across nodes, placed like NUMA
# memory, a counter under a cluster lock, and the statistics.
set -u
. "$VCLUSTER_LIB"

S=$SDSM_ROOT/selftests/sdsm
MU=$S/sdsm_mem_util
SYNC=$S/sync_test
CTL=$SDSM_ROOT/tools/sdsmctl/sdsmctl
PROG=$SDSM_ROOT/userlib/build/placement_prog

n=$SDSM_NR_NODES
all_up() {
	local k s
	for ((k = 0; k < n; k++)); do
		s=$(cat "/sys/kernel/sdsm/nodes/$k/state" 2>/dev/null) || return 1
		[ "$s" = up ] || [ "$s" = self ] || return 1
	done
}

echo "== sdsm demo: $n nodes, this is node $SDSM_NODE_ID =="
for ((k = 0; k < n; k++)); do
	echo "-- node $k waits for its peers"
	if ! on_node "$k" bash -c "$(declare -f all_up); n=$n; \
		. \"\$VCLUSTER_LIB\"; wait_until 60 all_up"; then
		echo "node $k: not every peer came up within 60 s" >&2
		on_node "$k" grep -r . /sys/kernel/sdsm/nodes >&2
		exit 1
	fi
done
echo "-- every node sees every other node up"
echo
for ((k = 0; k < n; k++)); do
	echo "== /sys/kernel/sdsm as node $k sees it"
	on_node "$k" bash -c '
		printf "node_id=%s nr_nodes=%s\n" \
			"$(cat /sys/kernel/sdsm/node_id)" \
			"$(cat /sys/kernel/sdsm/nr_nodes)"
		printf "%-5s %-14s %-10s %8s %8s %8s %10s %10s\n" node addr state \
			rtt_us tx_msgs rx_msgs tx_bytes rx_bytes
		for d in /sys/kernel/sdsm/nodes/*; do
			printf "%-5s %-14s %-10s %8s %8s %8s %10s %10s\n" \
				"${d##*/}" "$(cat $d/addr)" "$(cat $d/state)" \
				"$(cat $d/rtt_us)" "$(cat $d/tx_msgs)" \
				"$(cat $d/rx_msgs)" "$(cat $d/tx_bytes)" \
				"$(cat $d/rx_bytes)"
		done'
	echo
done

fail() {
	echo "demo: $*" >&2
	exit 1
}

echo "== sdsmctl --hardware (node 0)"
"$CTL" --hardware || fail "sdsmctl --hardware failed"
echo

echo "== coherent memory: one word and 64 pages, written on one node, read on all"
off=$((4 << 20))
"$MU" poke $off 4242 || fail "poke on node 0 failed"
for ((k = 0; k < n; k++)); do
	echo "node $k reads $(on_node "$k" "$MU" peek $off) at offset $off"
done
last=$((n - 1))
on_node "$last" "$MU" fill $((off + 4096)) $((64 * 4096)) 7 ||
	fail "fill on node $last failed"
echo "node $last wrote a pattern over 64 pages (homes: every node)"
for ((k = 0; k < n; k++)); do
	if on_node "$k" "$MU" check $((off + 4096)) $((64 * 4096)) 7; then
		echo "node $k: all 64 pages verified"
	else
		fail "node $k: the pattern does not verify"
	fi
done
echo

echo "== placement, numactl style: sdsmctl POLICY -- placement_prog 6"
for pol in --interleave=all --membind=$last --localalloc; do
	printf '%-18s ' "$pol"
	"$CTL" "$pol" -- "$PROG" 6 || fail "sdsmctl $pol failed"
done
echo

echo "== a counter in shared memory under a cluster lock: 2 processes x 10 increments per node"
coff=$(( (40 << 20) + 64 ))
id=$((RANDOM + 777000))
before=$("$SYNC" memread $coff) || fail "memread failed"
pids=()
for ((k = 0; k < n; k++)); do
	for p in 1 2; do
		on_node "$k" "$SYNC" memloop $id 10 $coff > /dev/null &
		pids+=($!)
	done
done
for p in "${pids[@]}"; do
	wait "$p" || fail "a counting process failed"
done
for ((k = 0; k < n; k++)); do
	v=$(on_node "$k" "$SYNC" memread $coff)
	echo "node $k reads $((v - before)) more than before (want $((n * 20)))"
	[ $((v - before)) = $((n * 20)) ] || fail "lost updates"
done
echo

echo "== sdsmctl stat (node 0)"
"$CTL" stat | grep -v ' 0$'
