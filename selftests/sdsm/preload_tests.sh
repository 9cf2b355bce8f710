#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cluster tests of libsdsm-preload.so, TAP 13: an unmodified pthread
# program (preload_prog.c, plain gcc -pthread) run under
# `sdsmctl --interleave=all --` on node 0 of a 3-node vcluster:
#
#	tools/vcluster/vcluster run -n 3 --on 0 -- selftests/sdsm/preload_tests.sh
#
# 1. its output is the one of a native run (threads, realloc, fork);
# 2. its malloc'ed pages, its .bss and its anonymous mmap are in regions of
#    its own, homed round-robin over the 3 nodes (QUERY_HOME from
#    sdsm_mem_util, which opens the same region by name and reads the
#    values the program wrote);
# 3. after it exits, no region of it is left on any node;
# 4. the same after SIGKILL;
# 5. the malloc-heavy loop on one node vs native: reported, not asserted.
set -u

ROOT=${SDSM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
HERE=$ROOT/selftests/sdsm
SDSMCTL=$ROOT/tools/sdsmctl/sdsmctl
PROG=$ROOT/userlib/build/preload_prog
UTIL=$HERE/sdsm_mem_util
SYSFS=/sys/kernel/sdsm
NR=${SDSM_NR_NODES:-3}
# shellcheck source=/dev/null
. "${VCLUSTER_LIB:-$ROOT/tools/vcluster/guest-lib.sh}"

n=0
failed=0
echo "TAP version 13"
echo "1..5"
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
diag() { sed 's/^/#   /'; }

if [ ! -x "$PROG" ]; then
	PROG=/tmp/preload_prog
	gcc -O2 -pthread -o "$PROG" "$HERE/preload_prog.c" 2>&1 | diag
fi
T=$(mktemp -d /tmp/preload.XXXXXX)
pid=
# A held program never outlives the script (it would pin the module).
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$T"' EXIT

# regions_of PID: names of PID's regions known on this node.
regions_of() {
	cat "$SYSFS"/regions/*/name 2>/dev/null | grep -E "^[ag]\.[0-9]+\.$1(\.|$)"
}

# no_regions_anywhere PID: no node knows a region of PID.
no_regions_anywhere() {
	local k
	for ((k = 0; k < NR; k++)); do
		if [ "$k" = 0 ]; then
			[ -z "$(regions_of "$1")" ] || return 1
		else
			on_node "$k" sh -c "cat $SYSFS/regions/*/name 2>/dev/null" |
				grep -qE "^[ag]\.[0-9]+\.$1(\.|\$)" && return 1
		fi
	done
	return 0
}

# 1. Same output as natively.
native=$(vc_bounded 120 "$PROG" | grep '^result')
placed=$(vc_bounded 300 "$SDSMCTL" --interleave=all -- "$PROG" 2> "$T/err" |
	 grep '^result')
if [ -n "$native" ] && [ "$native" = "$placed" ] &&
   grep -q 'fork ok' <<< "$placed"; then
	ok "unmodified program: same output as native"
else
	not_ok "unmodified program: same output as native"
	{ echo "native:"; echo "$native"; echo "placed:"; echo "$placed"; cat "$T/err"; } | diag
fi

# 2. Homes of its heap, .bss and anonymous mmap.
rm -f "$T/go"
SDSM_PRELOAD_VERBOSE=1 "$SDSMCTL" --interleave=all -- "$PROG" hold "$T/go" \
	> "$T/out" 2> "$T/err" &
pid=$!
wait_until 120 grep -q '^ready' "$T/out"
regs=$(regions_of $pid)
check_homes() {	# KIND BASEVALUE: prints a diagnosis, returns 1 on failure
	local kind=$1 base=$2 addr='' pages='' start off name r k h0 homes offs
	# No /dev/fd in the guests: no process substitution.
	read -r addr pages <<< "$(awk -v k="$kind" '$1 == k { print $2, $3 }' "$T/out")"
	[ -n "$addr" ] || { echo "$kind: no address"; return 1; }
	start=
	while IFS='- ' read -r lo hi _; do
		if ((0x$lo <= addr && addr < 0x$hi)); then
			start=$lo
			break
		fi
	done < /proc/$pid/maps
	[ -n "$start" ] || { echo "$kind: $addr not mapped"; return 1; }
	off=$((addr - 0x$start))
	name=
	for r in $regs; do
		[ "$("$UTIL" -r "$r" peek $off 2>/dev/null)" = "$base" ] &&
			{ name=$r; break; }
	done
	[ -n "$name" ] || { echo "$kind: value $base not found in regions: $regs"; return 1; }
	offs=
	for ((k = 0; k < pages; k++)); do
		[ "$("$UTIL" -r "$name" peek $((off + k * 4096)))" = $((base + k)) ] ||
			{ echo "$kind: page $k of $name has the wrong value"; return 1; }
		offs="$offs $((off + k * 4096))"
	done
	# shellcheck disable=SC2086
	homes=$("$UTIL" -r "$name" home $offs | tr '\n' ' ')
	echo "$kind at $addr in region $name: homes $homes"
	read -r h0 _ <<< "$homes"
	k=0
	for h in $homes; do
		[ "$h" = $(((h0 + k) % NR)) ] || return 1
		k=$((k + 1))
	done
	return 0
}
bad=0
: > "$T/homes"
for kv in heap:2000 bss:1000 mmap:3000; do
	( check_homes "${kv%:*}" "${kv#*:}" ) >> "$T/homes" 2>&1 || bad=1
done
if [ -n "$regs" ] && [ "$bad" = 0 ]; then
	ok "heap, .bss and anonymous mmap homed round-robin over $NR nodes"
else
	not_ok "heap, .bss and anonymous mmap homed round-robin over $NR nodes"
fi
{ echo "regions of $pid: $(echo $regs)"; cat "$T/homes" "$T/err"; } | diag

# 3. Normal exit: every region of it goes, on every node.
touch "$T/go"
exited() {
	local st
	st=$(awk '/^State/ { print $2 }' /proc/"$1"/status 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ]
}
wait_until 120 exited $pid
wait $pid 2>/dev/null
if [ -n "$regs" ] && wait_until 60 no_regions_anywhere $pid; then
	ok "after exit no region of the program is left on any node"
else
	not_ok "after exit no region of the program is left on any node"
	regions_of $pid | diag
fi

# 4. SIGKILL.
rm -f "$T/go"
"$SDSMCTL" --interleave=all -- "$PROG" hold "$T/go" > "$T/out" 2>&1 &
pid=$!
wait_until 120 grep -q '^ready' "$T/out"
regs=$(regions_of $pid)
kill -KILL $pid
wait $pid 2>/dev/null
if [ -n "$regs" ] && wait_until 60 no_regions_anywhere $pid; then
	ok "after SIGKILL no region of the program is left on any node"
else
	not_ok "after SIGKILL no region of the program is left on any node"
	{ echo "had: $(echo $regs)"; regions_of $pid; } | diag
fi

# 5. Overhead on one node (--membind=0: every page local), reported.
iters=${PRELOAD_BENCH_ITERS:-200000}
nat=$(vc_bounded 120 "$PROG" bench $iters | awk '{ print $2 }')
shim=$(vc_bounded 300 "$SDSMCTL" --membind=0 -- "$PROG" bench $iters |
       awk '{ print $2 }')
il=$(vc_bounded 300 "$SDSMCTL" --interleave=all -- "$PROG" bench $iters |
     awk '{ print $2 }')
if [ -n "$nat" ] && [ -n "$shim" ]; then
	ok "malloc-heavy loop: native $nat ns, shim $shim ns per malloc+free pair ($(awk -v a="$shim" -v b="$nat" 'BEGIN { printf "%.2f", a / b }')x); interleave=all $il ns"
else
	not_ok "malloc-heavy loop ran natively and under the shim"
fi
exit $failed
