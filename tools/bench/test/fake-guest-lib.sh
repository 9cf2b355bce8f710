# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# fake-guest-lib.sh - the parts of tools/vcluster/guest-lib.sh that
# tools/bench/guest.sh uses, for running it on the host against
# fake_sdsm.so (selftest.sh): every "node" is this host, on_node only sets
# SDSM_NODE_ID for the command (and BENCH_SYSFS to $FAKE_SYSFS/node<k>,
# that node's fake /sys/kernel/sdsm, when FAKE_SYSFS is set).

vc_bounded() {
	_fb_to=$1
	shift
	timeout -k 5 "$_fb_to" "$@"
}

wait_until() {
	_fw_end=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$_fw_end" ] || return 1
		sleep 0.05
	done
}

on_node() {
	_fo_k=$1
	shift
	[ "$_fo_k" -lt "$SDSM_NR_NODES" ] || return 2
	(
		SDSM_NODE_ID=$_fo_k
		export SDSM_NODE_ID
		if [ -n "${FAKE_SYSFS:-}" ]; then
			BENCH_SYSFS=$FAKE_SYSFS/node$_fo_k
			export BENCH_SYSFS
		fi
		"$@"
	) 2>&1
}

sdsm_load() {
	[ -z "${FAKE_LOAD_FAIL:-}" ]
}

sdsm_unload() {
	:
}
