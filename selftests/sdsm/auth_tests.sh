#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# auth_tests.sh - peer authentication (issue 13): a rogue node that does
# not know the cluster secret never joins and never disturbs the cluster.
# Run on node 0 of a vcluster of 3 or more nodes from the repository root
# (run_all.sh runs it as suite "auth"); the last node plays the rogue, the
# others are the cluster:
#
#   make module selftests
#   tools/vcluster/vcluster run -n 3 --on 0 --timeout 900 -- \
#	selftests/sdsm/auth_tests.sh [TEST...]
#
# Prints one TAP stream and exits 1 if any test failed.  Each test is
# bounded (SDSM_TEST_TIMEOUT, default 300 s); after each one the rogue is
# loaded again with the cluster secret and every node must see every other
# up, so the tests are independent.

# The body is one { } block: bash parses it whole before running it, so
# editing this file cannot break an instance that is already running.
{
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
NODE_SH=$HERE/sdsm_node.sh
MEM_UTIL=$HERE/sdsm_mem_util
SYNC_TEST=$HERE/sync_test
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || { echo "Bail out! VCLUSTER_LIB not set"; exit 1; }
# shellcheck source=selftests/sdsm/tap_runner.sh
. "$HERE/tap_runner.sh" || { echo "Bail out! tap_runner.sh"; exit 1; }

: "${SDSM_TEST_TIMEOUT:=300}"
N=$SDSM_NR_NODES
ROGUE=$((N - 1))
LEGIT=$(seq -s ' ' 0 $((N - 2)))
ROGUE_ADDR=198.18.0.$N
# forged_connect: the rogue claims node VICTIM and connects to TARGET.
VICTIM=$((N - 3))
VICTIM_ADDR=198.18.0.$((VICTIM + 1))
TARGET=$((N - 2))
UP_SEC=90
# How long the rogue keeps trying while the cluster is watched.
ROGUE_SEC=10

ALL_TESTS="all_up no_remote_keys no_secret auth_none_refused wrong_secret
forged_connect"

if [ "$N" -lt 3 ] || [ "$SDSM_NODE_ID" != 0 ]; then
	echo "Bail out! run on node 0 of a vcluster of 3 or more nodes"
	exit 1
fi
for f in "$MEM_UTIL" "$SYNC_TEST"; do
	[ -x "$f" ] || { echo "Bail out! $f missing: make selftests"; exit 1; }
done

mark_all() {
	local k
	for k in $LEGIT $ROGUE; do
		run_on "$k" "$NODE_SH" mark "$1"
	done
}

# legit_up: every cluster node sees every other cluster node up.
legit_up() {
	local k j s rc=0
	for k in $LEGIT; do
		for j in $LEGIT; do
			[ "$k" = "$j" ] && continue
			s=$(run_on "$k" "$NODE_SH" state "$j")
			if [ "$s" != up ]; then
				log "node $k sees node $j $s"
				rc=1
			fi
		done
	done
	return $rc
}

# rogue_not_up: no cluster node sees the rogue up, and the rogue sees
# nobody up.
rogue_not_up() {
	local k s rc=0
	for k in $LEGIT; do
		s=$(run_on "$k" "$NODE_SH" state $ROGUE)
		if [ "$s" = up ]; then
			log "node $k sees the rogue up"
			rc=1
		fi
	done
	s=$(run_on $ROGUE "$NODE_SH" states)
	log "the rogue sees: $s"
	case " $s " in
	*=up\ *) log "the rogue sees a node up"; rc=1 ;;
	esac
	return $rc
}

# grep_log K PATTERN MARK: node K logged PATTERN since MARK.
grep_log() {
	if ! run_on "$1" "$NODE_SH" dmesg_since "$3" | grep -m1 -F "$2"; then
		log "node $1: no log line '$2'"
		return 1
	fi
}

rogue_unload() {
	run_on $ROGUE sh -c '! [ -d /sys/module/sdsm ] || rmmod sdsm'
}

# rogue_key NAME: a fresh random secret under another description.
rogue_key() {
	run_on $ROGUE sh -c "head -c 32 /dev/urandom |
		keyctl padd logon $1 @u > /dev/null"
}

# An offset of the default region whose home is node $1 (as node 0 sees).
offset_homed_on() {
	local off h
	for off in $(seq 0 4096 262144); do
		h=$("$MEM_UTIL" home "$off" | awk '{print $NF}')
		if [ "$h" = "$1" ]; then
			echo "$off"
			return 0
		fi
	done
	return 1
}

# A lock id that node $1 manages.
lock_managed_by() {
	local id
	for id in $(seq 4096 4196); do
		if [ "$("$SYNC_TEST" manager lock "$id" 2>/dev/null)" = "$1" ]; then
			echo "$id"
			return 0
		fi
	done
	return 1
}

# ------------------------------------------------------------------ tests

# With the secret the harness gave every node, all four come up: the
# handshake works in both directions between every pair.
test_all_up() {
	local k rc=0
	for k in $LEGIT $ROGUE; do
		run_on "$k" "$NODE_SH" wait_all_up "$UP_SEC" || rc=1
	done
	return $rc
}

# No memory of any node is open to remote access (issue 13: "remote access
# keys cover only what a region exposes", and no region exposes any: every
# message is a SEND into posted buffers).  After pages went between every
# pair of nodes, each node's RDMA resource tracker (rdma res show) lists
# PDs of sdsm, none with an unsafe global rkey, and no memory region of
# sdsm that a peer could use: none, or only the PD's local DMA region,
# whose key is the PD's local_dma_lkey.
test_no_remote_keys() {
	local k j off v pds mrs lkeys rc=0
	for j in $LEGIT $ROGUE; do
		off=$(offset_homed_on "$j") || { log "no page homed on $j"; return 1; }
		for k in $LEGIT $ROGUE; do
			run_on "$k" "$MEM_UTIL" poke "$off" $((k * 10 + j)) || rc=1
			v=$("$MEM_UTIL" peek "$off") || rc=1
			[ "$v" = $((k * 10 + j)) ] ||
				{ log "page homed on $j: $v after node $k's write"; rc=1; }
		done
	done
	for k in $LEGIT $ROGUE; do
		pds=$(run_on "$k" rdma -d res show pd | grep -F "comm [sdsm]")
		mrs=$(run_on "$k" rdma -d res show mr | grep -F "comm [sdsm]")
		printf '%s\n' "$pds" "$mrs" | grep . | sed "s/^/# node $k: /"
		if [ -z "$pds" ]; then
			log "node $k: the tracker lists no PD of sdsm"
			rc=1
		elif printf '%s\n' "$pds" | grep -q unsafe_global_rkey; then
			log "node $k: a PD of sdsm has a global rkey"
			rc=1
		fi
		lkeys=$(printf '%s\n' "$pds" |
			sed -n 's/.*local_dma_lkey \(0x[0-9a-f]*\).*/\1/p')
		[ -z "$mrs" ] && continue
		printf '%s\n' "$mrs" | while read -r line; do
			v=$(printf '%s\n' "$line" | sed -n 's/.* lkey \(0x[0-9a-f]*\).*/\1/p')
			case " $(echo $lkeys) " in
			*" $v "*) ;;
			*) echo "$line"; exit 1 ;;
			esac
		done || { log "node $k: an MR of sdsm that is not a PD's local DMA region"; rc=1; }
	done
	return $rc
}

# No secret: insmod fails with one clear line and leaves nothing behind.
test_no_secret() {
	local m=nosecret.$$ out lines rc=0
	rogue_unload || return 1
	run_on $ROGUE "$NODE_SH" mark "$m"
	if out=$(run_on $ROGUE sh -c "insmod $SDSM_KO node_id=$ROGUE \
		nodes=$SDSM_NODES auth_key=sdsm:absent 2>&1"); then
		log "insmod without the secret succeeded"
		return 1
	fi
	log "insmod: $out"
	lines=$(run_on $ROGUE "$NODE_SH" dmesg_since "$m" | grep 'sdsm: ' |
		grep -v 'taints kernel\|module verification failed')
	log "$lines"
	if [ "$(echo "$lines" | grep -c .)" != 1 ] ||
	   ! echo "$lines" | grep -qF "no cluster secret: logon key 'sdsm:absent' not found"; then
		log "want exactly one 'no cluster secret' line"
		rc=1
	fi
	run_on $ROGUE sh -c '! [ -e /sys/module/sdsm ] && ! [ -e /dev/sdsm ]' ||
		{ log "module state left behind"; rc=1; }
	return $rc
}

# auth=none loads only when asked, says so loudly, and is refused by
# nodes that authenticate (and refuses them), with the address logged.
test_auth_none_refused() {
	local m=none.$$ k rc=0
	rogue_unload || return 1
	mark_all "$m"
	run_on $ROGUE "$NODE_SH" load auth=none || return 1
	sleep "$ROGUE_SEC"
	grep_log $ROGUE "auth=none: peers are NOT authenticated" "$m" || rc=1
	grep_log $ROGUE "rejected a connection from 198.18.0.1: one side runs auth=none" "$m" || rc=1
	for k in $LEGIT; do
		grep_log "$k" "node $ROGUE ($ROGUE_ADDR) rejected us: one side runs auth=none" "$m" || rc=1
	done
	rogue_not_up || rc=1
	legit_up || rc=1
	return $rc
}

# A rogue with another secret: every cluster node refuses it and logs its
# address; the cluster stays up and coherent while the rogue retries; the
# rogue can neither fault a page nor take a lock.
test_wrong_secret() {
	local m=wrong.$$ k rc=0 off0 off1 lock v
	rogue_unload || return 1
	rogue_key sdsm:rogue || return 1
	off0=$(offset_homed_on 0) && off1=$(offset_homed_on 1) ||
		{ log "no offsets homed on nodes 0 and 1"; return 1; }
	lock=$(lock_managed_by 0) || { log "no lock managed by node 0"; return 1; }
	mark_all "$m"
	run_on $ROGUE "$NODE_SH" load auth_key=sdsm:rogue fault_timeout_ms=1000 ||
		return 1
	sleep 3
	# Coherent traffic among the cluster nodes while the rogue retries.
	for v in 11 12 13; do
		"$MEM_UTIL" poke "$off0" "$v" || rc=1
		[ "$(run_on 1 "$MEM_UTIL" peek "$off0")" = "$v" ] ||
			{ log "node 1 does not read $v at $off0"; rc=1; }
		run_on "$TARGET" "$MEM_UTIL" poke "$off1" "$((v + 100))" || rc=1
		[ "$("$MEM_UTIL" peek "$off1")" = "$((v + 100))" ] ||
			{ log "node 0 does not read $((v + 100)) at $off1"; rc=1; }
	done
	# The rogue asks anyway.
	if run_on $ROGUE "$MEM_UTIL" expect_sigbus "$off0" 5000; then
		log "the rogue's fault on a page of node 0 failed (SIGBUS)"
	else
		log "the rogue's fault did not get SIGBUS"
		rc=1
	fi
	if run_on $ROGUE "$SYNC_TEST" acquire "$lock" 2000; then
		log "the rogue took lock $lock of node 0"
		rc=1
	fi
	sleep 2
	for k in $LEGIT; do
		grep_log "$k" "node $ROGUE ($ROGUE_ADDR): authentication failed (wrong cluster secret)" "$m" || rc=1
	done
	rogue_not_up || rc=1
	legit_up || rc=1
	[ "$("$MEM_UTIL" peek "$off0")" = 13 ] || { log "value lost"; rc=1; }
	return $rc
}

# A forged connect request: the rogue takes node VICTIM's address
# (silently: it answers no ARP) and connects to node TARGET (the next id)
# as node VICTIM while VICTIM is up.  TARGET refuses it before
# authentication and never drops VICTIM's connection.
test_forged_connect() {
	local m=forged.$$ rc=0 t
	rogue_unload || return 1
	rogue_key sdsm:rogue || return 1
	mark_all "$m"
	run_on $ROGUE sh -c 'sysctl -qw net.ipv4.conf.all.arp_ignore=8 \
		net.ipv4.conf.eth0.arp_ignore=8 net.ipv4.conf.all.arp_announce=2 \
		net.ipv4.conf.eth0.arp_announce=2 &&
		ip addr add '"$VICTIM_ADDR"'/32 dev eth0 && sleep 1' || return 1
	run_on $ROGUE sh -c "insmod $SDSM_KO node_id=$VICTIM nodes=$SDSM_NODES \
		auth_key=sdsm:rogue" || rc=1
	# TARGET must see VICTIM up all along.
	for t in $(seq $((ROGUE_SEC * 2))); do
		if [ "$(run_on $TARGET "$NODE_SH" state $VICTIM)" != up ]; then
			log "node $TARGET lost node $VICTIM after ${t} half-seconds"
			rc=1
			break
		fi
		sleep 0.5
	done
	grep_log $TARGET "node $VICTIM ($VICTIM_ADDR): connection refused before authentication" "$m" || rc=1
	if run_on $TARGET "$NODE_SH" dmesg_since "$m" |
		grep "node $VICTIM connects again\|node $VICTIM ($VICTIM_ADDR) down"; then
		log "node $TARGET dropped node $VICTIM's connection"
		rc=1
	fi
	legit_up || rc=1
	rogue_unload || rc=1
	run_on $ROGUE sh -c 'ip addr del '"$VICTIM_ADDR"'/32 dev eth0;
		sysctl -qw net.ipv4.conf.all.arp_ignore=0 \
		net.ipv4.conf.eth0.arp_ignore=0 net.ipv4.conf.all.arp_announce=0 \
		net.ipv4.conf.eth0.arp_announce=0' || rc=1
	return $rc
}

# ------------------------------------------------------------------ runner

restore_cluster() {
	local k rc=0
	if ! run_on $ROGUE sh -c '[ -d /sys/module/sdsm ] &&
		[ "$(cat /sys/kernel/sdsm/node_id)" = '"$ROGUE"' ] &&
		grep -q "^hmac-sha256$" /sys/module/sdsm/parameters/auth &&
		grep -q "^sdsm:cluster$" /sys/module/sdsm/parameters/auth_key'; then
		rogue_unload
		run_on $ROGUE "$NODE_SH" load || rc=1
	fi
	for k in $LEGIT $ROGUE; do
		run_on "$k" "$NODE_SH" wait_all_up "$UP_SEC" || rc=1
	done
	return $rc
}

tests=${*:-$ALL_TESTS}
# shellcheck disable=SC2086
run_tap_tests $tests
exit
}
