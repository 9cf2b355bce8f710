#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs on node 0 of the demo cluster (see tools/demo.sh).
set -u
. "$VCLUSTER_LIB"

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
