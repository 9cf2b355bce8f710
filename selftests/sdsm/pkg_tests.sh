#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pkg_tests.sh - the Debian packages in a cluster (issue 15): every node
# unpacks libsdsm1 and sdsm-tools, joins the cluster with the packaged
# sdsmctl from a cluster.conf and the sdsm.ko DKMS built from sdsm-dkms,
# and a program built against libsdsm-dev checks coherence across nodes.
# Needs out/deb/stage from tests/build/test_deb.sh (make check builds it).
# Run on node 0 of a vcluster of 2 or more nodes from the repository root
# (run_all.sh runs it as suite "packages"):
#
#   tests/build/test_deb.sh
#   tools/vcluster/vcluster run -n 2 --on 0 --timeout 900 -- \
#	selftests/sdsm/pkg_tests.sh [TEST...]
#
# The guests boot the host's root read-only: nothing is installed into it.
# Each node unpacks with dpkg -x into /tmp/sdsm-pkg, its private tmpfs,
# and runs from there.  The test "leave" unloads the packaged module; the
# restore after each test loads the harness's module where none is loaded.
#
# The test "boot" boots every node as a Debian system with the packages
# installed (selftests/sdsm/pkg_boot.sh: the host's systemd as PID 1 of
# namespaces of the guest, on an overlay of its root): at boot sdsm.service
# loads the DKMS-built module with modprobe and joins, systemd-sysusers
# makes group sdsm, udev gives /dev/sdsm to it, systemd-sysctl applies
# 60-sdsm.conf; the nodes reach each other and agree on memory; a poweroff
# runs ExecStop, which unloads the module on every node.

# The body is one { } block: bash parses it whole before running it, so
# editing this file cannot break an instance that is already running.
{
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SELF=$HERE/pkg_tests.sh
NODE_SH=$HERE/sdsm_node.sh
BOOT=$HERE/pkg_boot.sh
# shellcheck source=tools/vcluster/guest-lib.sh
. "$VCLUSTER_LIB" || { echo "Bail out! VCLUSTER_LIB not set"; exit 1; }

: "${SDSM_TEST_TIMEOUT:=300}"
N=$SDSM_NR_NODES
STAGE=$SDSM_ROOT/out/deb/stage
PKG=/tmp/sdsm-pkg
VERSION=$(cat "$SDSM_ROOT/VERSION")
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
UP_SEC=90
# The systemd boot of "boot" (setup included), and its poweroff: 15-180 s
# and 5-20 s a node on a 2-core TCG host with 3 nodes booting at once (one
# node often boots in 15-35 s while the others take 75-180 s: their vCPUs
# stall, "clocksource: Long readout interval"), and CI's hosts may be
# slower by a third.  "boot" as a whole has a bound of its own.
BOOT_SEC=360
OFF_SEC=90
ALL_TESTS="unpack join version coherence hardware leave boot"

# ---- what runs on each node: pkg_tests.sh --node CMD ----

node_unpack() {
	local d
	rm -rf "$PKG"
	mkdir -p "$PKG/etc/sdsm" || return 1
	for d in libsdsm1 sdsm-tools; do
		dpkg -x "$STAGE/${d}_${VERSION}_$(dpkg --print-architecture).deb" \
			"$PKG" || { echo "node $SDSM_NODE_ID: dpkg -x $d failed"; return 1; }
	done
	if [ ! -x "$PKG/usr/bin/sdsmctl" ] || [ ! -f "$PKG/usr/lib/$MA/libsdsm.so.1" ]; then
		echo "node $SDSM_NODE_ID: sdsmctl or libsdsm.so.1 missing"
		return 1
	fi
	echo "node $SDSM_NODE_ID: unpacked into $PKG"
}

# The cluster config as an administrator writes it once (admin guide).
node_join() {
	local i=0 a conf=$PKG/etc/sdsm/cluster.conf
	[ -x "$PKG/usr/bin/sdsmctl" ] || node_unpack || return 1
	install -m 600 "$SDSM_KEY_FILE" "$PKG/etc/sdsm/cluster.key" || return 1
	{
		echo "# written by pkg_tests.sh"
		for a in ${SDSM_NODES//,/ }; do
			echo "node $i $a"
			i=$((i + 1))
		done
		echo "secret $PKG/etc/sdsm/cluster.key"
	} > "$conf"
	if sdsm_loaded; then
		sdsm_unload || return 1
	fi
	vc_bounded 60 "$PKG/usr/bin/sdsmctl" join --module "$STAGE/sdsm.ko" \
		"$conf" || { echo "node $SDSM_NODE_ID: sdsmctl join failed"; return 1; }
	: > "$PKG/joined"
	echo "node $SDSM_NODE_ID: joined with the packaged sdsmctl and module"
}

node_version() {
	local v
	v=$(cat /sys/module/sdsm/version 2>&1)
	[ "$v" = "$VERSION" ] ||
		{ echo "node $SDSM_NODE_ID: module version '$v', want $VERSION"; return 1; }
	v=$("$PKG/usr/bin/sdsmctl" --version 2>&1)
	[ "$v" = "sdsmctl (sdsm) $VERSION" ] ||
		{ echo "node $SDSM_NODE_ID: sdsmctl says '$v'"; return 1; }
	echo "node $SDSM_NODE_ID: module and sdsmctl are $VERSION"
}

# node_prog ARGS: pkg_prog with the unpacked libsdsm1, nothing else.
node_prog() {
	local lib
	lib=$(LD_LIBRARY_PATH=$PKG/usr/lib/$MA ldd "$STAGE/pkg_prog" |
		awk '$1 == "libsdsm.so.1" {print $3}')
	[ "$lib" = "$PKG/usr/lib/$MA/libsdsm.so.1" ] ||
		{ echo "node $SDSM_NODE_ID: pkg_prog resolves libsdsm.so.1 to '$lib'"; return 1; }
	LD_LIBRARY_PATH=$PKG/usr/lib/$MA "$STAGE/pkg_prog" "$@"
}

node_leave() {
	[ -e "$PKG/joined" ] || { echo "node $SDSM_NODE_ID: not joined"; return 1; }
	# What sdsm.service's ExecStop does (modprobe -r; the module here
	# is not in /lib/modules, so rmmod).
	sdsm_unload || return 1
	rm -f "$PKG/joined"
	echo "node $SDSM_NODE_ID: left"
}

# After each test: no booted system left (pkg_boot.sh), and the
# harness's state (sdsm_node.sh restore).
node_restore() {
	local rc=0
	if [ -e /tmp/sdsm-boot ]; then
		"$BOOT" cleanup || rc=1
	fi
	"$NODE_SH" restore || rc=1
	return $rc
}

if [ "${1:-}" = --node ]; then
	shift
	cmd=$1
	shift
	"node_$cmd" "$@"
	exit
fi

# ---- the tests, on node 0 ----

# shellcheck source=selftests/sdsm/tap_runner.sh
. "$HERE/tap_runner.sh" || { echo "Bail out! tap_runner.sh"; exit 1; }

if [ "$N" -lt 2 ] || [ "$SDSM_NODE_ID" != 0 ]; then
	echo "Bail out! run on node 0 of a vcluster of 2 or more nodes"
	exit 1
fi
for f in "$STAGE/sdsm.ko" "$STAGE/pkg_prog"; do
	[ -e "$f" ] || { echo "Bail out! $f missing: run tests/build/test_deb.sh"; exit 1; }
done

joined_everywhere() {
	local k
	for k in $(nodes); do
		run_on "$k" test -e "$PKG/joined" || run_on "$k" "$SELF" --node join || return 1
	done
	every_node_all_up
}

test_unpack() {
	local k
	for k in $(nodes); do
		run_on "$k" "$SELF" --node unpack || return 1
	done
}

test_join() {
	local k
	for k in $(nodes); do
		run_on "$k" "$SELF" --node join || return 1
	done
	every_node_all_up
}

test_version() {
	local k
	joined_everywhere || return 1
	for k in $(nodes); do
		run_on "$k" "$SELF" --node version || return 1
	done
}

# Node 0 writes, every other node reads; then the last node writes a
# second region and node 0 reads it.
test_coherence() {
	local k last=$((N - 1)) rc=0 seed=$RANDOM
	joined_everywhere || return 1
	run_on 0 "$SELF" --node prog destroy pkg.a > /dev/null 2>&1
	run_on 0 "$SELF" --node prog destroy pkg.b > /dev/null 2>&1
	run_on 0 "$SELF" --node prog write pkg.a 8 "$seed" || return 1
	for k in $(seq 1 "$last"); do
		run_on "$k" "$SELF" --node prog check pkg.a 8 "$seed" || rc=1
	done
	run_on "$last" "$SELF" --node prog write pkg.b 4 $((seed + 100)) || rc=1
	run_on 0 "$SELF" --node prog check pkg.b 4 $((seed + 100)) || rc=1
	run_on 0 "$SELF" --node prog destroy pkg.a || rc=1
	run_on 0 "$SELF" --node prog destroy pkg.b || rc=1
	return $rc
}

test_hardware() {
	local out
	joined_everywhere || return 1
	out=$("$PKG/usr/bin/sdsmctl" --hardware 2>&1)
	echo "$out"
	grep -q "^available: $N nodes" <<< "$out" &&
		[ "$(grep -cE '^[0-9]+ +[0-9.]+ +(self|up) ' <<< "$out")" -eq "$N" ]
}

test_leave() {
	local k
	joined_everywhere || return 1
	for k in $(nodes); do
		run_on "$k" "$SELF" --node leave || return 1
	done
}

# Every node boots with the packages installed, as the admin guide
# describes; a poweroff ends it.  Booting and powering off run on all
# nodes at once, each bounded.
test_boot() {
	local k rc=0 seed=$RANDOM last=$((N - 1)) names=
	WORK=$SDSM_SHARED/pkg-boot
	rm -rf "$WORK"
	mkdir -p "$WORK" || return 1
	for k in $(nodes); do
		bg "up$k" "$k" "$BOOT" up "$BOOT_SEC"
		names="$names up$k"
	done
	# shellcheck disable=SC2086 # a list of names
	wait_bg $((BOOT_SEC + 30)) $names || rc=1
	for k in $(nodes); do
		cat "$WORK/up$k.out" 2>/dev/null
		[ "$(cat "$WORK/up$k.rc" 2>/dev/null)" = 0 ] || rc=1
	done
	[ $rc = 0 ] || return 1
	every_node_all_up || return 1
	names=
	for k in $(nodes); do
		bg "check$k" "$k" "$BOOT" check
		names="$names check$k"
	done
	# shellcheck disable=SC2086 # a list of names
	wait_bg 120 $names || rc=1
	for k in $(nodes); do
		cat "$WORK/check$k.out" 2>/dev/null
		[ "$(cat "$WORK/check$k.rc" 2>/dev/null)" = 0 ] || rc=1
	done
	# Coherence with the packaged library, in the booted systems.
	run_on 0 "$BOOT" run /opt/sdsm-test/pkg_prog write pkg.boot 8 "$seed" || rc=1
	for k in $(seq 1 "$last"); do
		run_on "$k" "$BOOT" run /opt/sdsm-test/pkg_prog check pkg.boot 8 "$seed" ||
			rc=1
	done
	run_on 0 "$BOOT" run /opt/sdsm-test/pkg_prog destroy pkg.boot || rc=1
	[ $rc = 0 ] && log "pkg_prog: node 0 wrote, nodes 1-$last read the same"
	names=
	for k in $(nodes); do
		bg "off$k" "$k" "$BOOT" poweroff "$OFF_SEC"
		names="$names off$k"
	done
	# shellcheck disable=SC2086 # a list of names
	wait_bg $((OFF_SEC + 30)) $names || rc=1
	for k in $(nodes); do
		cat "$WORK/off$k.out" 2>/dev/null
		[ "$(cat "$WORK/off$k.rc" 2>/dev/null)" = 0 ] || rc=1
	done
	for k in $(nodes); do
		run_on "$k" "$BOOT" after || rc=1
		if run_on "$k" "$NODE_SH" dmesg_since pkg-boot |
			grep -E -f <(grep -v '^#' "$SDSM_ROOT/tools/vcluster/bad-log-patterns" | grep .); then
			log "node $k: the kernel log above is not clean"
			rc=1
		fi
	done
	return $rc
}

# The seconds test $1 may run: "boot" waits for whole boots and poweroffs.
tap_test_bound() {
	if [ "$1" = boot ]; then
		echo $((BOOT_SEC + OFF_SEC + 240))
	else
		echo "$SDSM_TEST_TIMEOUT"
	fi
}

# After each test: no booted system left, a module on every node (the
# harness's where none is loaded), every node sees every other up.
restore_cluster() {
	local rc=0
	par_on_nodes "$SELF" --node restore || rc=1
	every_node_all_up || rc=1
	return $rc
}

tests=${*:-$ALL_TESTS}
# shellcheck disable=SC2086
run_tap_tests $tests
}
