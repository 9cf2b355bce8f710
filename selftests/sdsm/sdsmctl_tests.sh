#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cluster tests of sdsmctl and libsdsm, TAP 13.  Run on node 0 of a 3-node
# vcluster with the module loaded everywhere:
#
#	tools/vcluster/vcluster run -n 3 --on 0 -- selftests/sdsm/sdsmctl_tests.sh
#
# Placement, region and statistics tests SKIP, with the reason, on a module
# without SDSM_FEATURE_PLACEMENT / _REGIONS or stats/.  The consistency
# tests (10-13) have no feature bit to skip on: a module without release
# consistency fails them.  The last test takes node 2 out of the cluster
# and brings it back with `sdsmctl join`.  Needs userlib/build/placement_prog
# and userlib/build/preload_prog (make -C userlib), else builds them in
# /tmp with the guest's gcc.
set -u

ROOT=${SDSM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SDSMCTL=$ROOT/tools/sdsmctl/sdsmctl
PROG=$ROOT/userlib/build/placement_prog
PPROG=$ROOT/userlib/build/preload_prog
SYSFS=/sys/kernel/sdsm
NR=${SDSM_NR_NODES:-3}
# shellcheck source=/dev/null
. "${VCLUSTER_LIB:-$ROOT/tools/vcluster/guest-lib.sh}"

n=0
failed=0
echo "TAP version 13"
echo "1..15"

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { sed 's/^/#   /'; }

# The module's features, read once.  A module without a feature SKIPs the
# tests that need it; an sdsmctl that cannot tell fails them (a broken
# helper must never turn into a skip).
if show=$("$SDSMCTL" --show 2>&1); then
	features=$(grep '^features:' <<< "$show")
	features_err=
else
	features=
	features_err="sdsmctl --show failed: $(tail -n 1 <<< "$show")"
fi

has_feature() {
	grep -q " $1\( \|$\)" <<< "$features"
}

# lacks NAME FEATURE...: print why NAME cannot run (nothing if it can).
lacks() {
	local f
	shift
	if [ -n "$features_err" ]; then
		echo "$features_err"
		return
	fi
	for f in "$@"; do
		has_feature "$f" || { echo "module lacks SDSM_FEATURE_${f^^}"; return; }
	done
}

# skip_or_fail NAME WHY: SKIP for a missing feature, else fail.
skip_or_fail() {
	if [ -n "$features_err" ]; then
		not_ok "$1"
		diag <<< "$2"
	else
		skip "$1" "$2"
	fi
}

all_up() {
	local k s
	for ((k = 0; k < NR; k++)); do
		s=$(cat "$SYSFS/nodes/$k/state" 2>/dev/null)
		[ "$s" = up ] || [ "$s" = self ] || return 1
	done
}

if [ ! -x "$PROG" ]; then
	PROG=/tmp/placement_prog
	gcc -O2 -I"$ROOT/userlib" -I"$ROOT/uapi" -o "$PROG" \
		"$ROOT/selftests/sdsm/placement_prog.c" "$ROOT/userlib/libsdsm.a" \
		-lpthread 2>&1 | diag
fi
if [ ! -x "$PPROG" ]; then
	PPROG=/tmp/preload_prog
	gcc -O2 -pthread -o "$PPROG" "$ROOT/selftests/sdsm/preload_prog.c" 2>&1 | diag
fi
T=$(mktemp -d /tmp/sdsmctl-tests.XXXXXX)
held=
# A held program never outlives the script (it would pin the module).
trap '[ -n "$held" ] && kill -KILL "$held" 2>/dev/null; rm -rf "$T"' EXIT

# 1: every node listed, all up.
wait_until 60 all_up || echo "# not every node is up after 60 s"
out=$("$SDSMCTL" --hardware 2>&1); rc=$?
good=1
[ $rc = 0 ] || good=0
grep -q "^available: $NR nodes (0-$((NR - 1)))$" <<< "$out" || good=0
for ((k = 0; k < NR; k++)); do
	grep -qE "^$k +198\.18\.0\.$((k + 1)) +(self|up) " <<< "$out" || good=0
done
grep -qE '^ +0: +10( +[0-9]+){'$((NR - 1))'}$' <<< "$out" || good=0
if [ $good = 1 ]; then
	ok "--hardware lists every node up, with distances"
else
	not_ok "--hardware lists every node up, with distances"
	diag <<< "$out"
fi

# 2: --show here and, through on_node, on node 1.
out=$(SDSM_POLICY=interleave:all "$SDSMCTL" --show 2>&1); rc=$?
out1=$(on_node 1 "$SDSMCTL" --show 2>&1)
if [ $rc = 0 ] && grep -q '^policy: interleave:all (from SDSM_POLICY' <<< "$out" &&
   grep -q '^this node: 0$' <<< "$out" &&
   grep -q "^nodes up: 0-$((NR - 1))$" <<< "$out" &&
   grep -q '^features: .*page_transport' <<< "$out" &&
   grep -q '^this node: 1$' <<< "$out1"; then
	ok "--show: policy, this node, nodes up, features"
else
	not_ok "--show: policy, this node, nodes up, features"
	diag <<< "$out"$'\n'"$out1"
fi

# 3: bad flags, out-of-range nodes against the live cluster.
good=1
for args in "-i $NR true" "--membind=0-$NR true" "-p 9 true" "--frob" \
	    "-i 2-1 true" "-i 0,,1 true"; do
	# shellcheck disable=SC2086
	err=$("$SDSMCTL" $args 2>&1 >/dev/null); rc=$?
	if [ $rc != 2 ] || [ "$(wc -l <<< "$err")" != 1 ]; then
		echo "# sdsmctl $args: exit $rc: $err"
		good=0
	fi
done
"$SDSMCTL" -i all no-such-command-xyz 2>/dev/null; rc=$?
[ $rc = 127 ] || { echo "# missing command: exit $rc"; good=0; }
if [ $good = 1 ]; then ok "bad flags and node lists exit 2"; else not_ok "bad flags and node lists exit 2"; fi

# 4: libsdsm names a missing device clearly, the module being loaded.
out=$(SDSM_DEVICE=/dev/sdsm-missing "$PROG" 2>&1); rc=$?
if [ $rc = 1 ] &&
   grep -qx 'placement_prog: /dev/sdsm-missing: missing, but the sdsm module is loaded' <<< "$out"; then
	ok "libsdsm: a missing device is named, with the module loaded"
else
	not_ok "libsdsm: a missing device is named, with the module loaded"
	diag <<< "$out (exit $rc)"
fi

placement_reason=$(lacks placement regions placement)

# expect_homes NAME WANT SDSMCTL-ARGS...
expect_homes() {
	local name=$1 want=$2 out rc
	shift 2
	if [ -n "$placement_reason" ]; then
		skip_or_fail "$name" "$placement_reason"
		return
	fi
	out=$(vc_bounded 120 "$SDSMCTL" "$@" -- "$PROG" 6 2>&1); rc=$?
	if [ $rc = 0 ] && grep -qx "homes: $want" <<< "$out"; then
		ok "$name"
	else
		not_ok "$name"
		diag <<< "$out (exit $rc, want homes: $want)"
	fi
}

# 5, 6, 7: placement through sdsmctl and SDSM_POLICY.
rot=
for ((i = 0; i < 6; i++)); do rot="$rot${rot:+ }$((i % NR))"; done
expect_homes "--interleave=all places pages round-robin" "$rot" --interleave=all
expect_homes "--membind=1 places every page on node 1" "1 1 1 1 1 1" --membind=1
expect_homes "--localalloc places pages on the toucher" "0 0 0 0 0 0" --localalloc

# 8: counters move when a program faults remote pages.
if [ -n "$placement_reason" ]; then
	skip_or_fail "stat: remote faults counted" "$placement_reason"
elif [ ! -e "$SYSFS/stats/write_faults_remote" ]; then
	skip "stat: remote faults counted" "no $SYSFS/stats/write_faults_remote"
else
	before=$("$SDSMCTL" stat | awk '$1 == "write_faults_remote" { print $2 }')
	vc_bounded 120 "$SDSMCTL" --membind=1 -- "$PROG" 6 > /dev/null 2>&1
	after=$("$SDSMCTL" stat | awk '$1 == "write_faults_remote" { print $2 }')
	if [ -n "$before" ] && [ -n "$after" ] && [ "$after" -ge $((before + 6)) ]; then
		ok "stat: remote faults counted"
	else
		not_ok "stat: remote faults counted"
		echo "#   write_faults_remote before '$before' after '$after' (want +6)"
	fi
fi

# 9: region create / show / destroy.  An interleaved region's homes are
# known before any touch (2 1 1 pages on 3 nodes for 4 pages); a
# first-touch region's pages are untouched until written.
region_reason=$(lacks region regions)
if [ -n "$region_reason" ]; then
	skip_or_fail "region create, show, destroy" "$region_reason"
else
	want_il="pages: 4"
	for ((k = 0; k < NR; k++)); do
		c=$(( 4 / NR + (k < 4 % NR ? 1 : 0) ))
		[ $c -gt 0 ] && want_il="$want_il|node $k: $c"
	done
	want_il="$want_il|untouched: 0"
	out=$( { vc_bounded 60 "$SDSMCTL" region create sdsmctl.il 16k --interleave=all &&
		 vc_bounded 60 "$SDSMCTL" region show sdsmctl.il &&
		 vc_bounded 60 "$SDSMCTL" region destroy sdsmctl.il; } 2>&1); rc=$?
	got_il=$(grep -E '^(pages|node [0-9]+|untouched):' <<< "$out" | paste -sd'|')
	out2=$( { vc_bounded 60 "$SDSMCTL" region create sdsmctl.ft 16k --localalloc &&
		  vc_bounded 60 "$SDSMCTL" region show sdsmctl.ft &&
		  vc_bounded 60 "$SDSMCTL" region list &&
		  vc_bounded 60 "$SDSMCTL" region destroy sdsmctl.ft; } 2>&1); rc2=$?
	# An absence is checked in a list that was made: region list fails
	# (a status of its own) rather than show nothing.
	listed=$(vc_bounded 60 "$SDSMCTL" region list 2>&1); rc3=$?
	if [ $rc = 0 ] && [ "$got_il" = "$want_il" ] && [ $rc2 = 0 ] &&
	   grep -q '^untouched: 4$' <<< "$out2" &&
	   grep -q 'sdsmctl\.ft' <<< "$out2" &&
	   [ $rc3 = 0 ] && ! grep -q 'sdsmctl\.' <<< "$listed"; then
		ok "region create, show, list, destroy"
	else
		not_ok "region create, show, list, destroy"
		diag <<< "$out (exit $rc; want $want_il)"$'\n'"$out2 (exit $rc2)"$'\n'"after destroy: $listed (exit $rc3)"
	fi
fi

# region_attr NAME ATTR: region NAME's ATTR (consistency, manager, ...) in
# this node's sysfs.
region_attr() {
	local d name
	for d in "$SYSFS"/regions/*/; do
		read -r name < "$d/name" 2>/dev/null || continue
		[ "$name" = "$1" ] || continue
		cat "$d/$2" 2>&1
		return
	done
	echo "no region $1 in $SYSFS/regions"
}

# region_consistency NAME WANT TEST: create NAME (with --consistency=WANT
# unless WANT is "default"); show here and on node 1, list and sysfs all
# say the consistency; destroy.
region_consistency() {
	local name=$1 want=$2 t=$3 out out1 rc rc1 listed sys good=1
	local -a opt=()
	if [ "$want" = default ]; then
		want=sequential
	else
		opt=(--consistency="$want")
	fi
	if [ -n "$region_reason" ]; then
		skip_or_fail "$t" "$region_reason"
		return
	fi
	out=$( { vc_bounded 60 "$SDSMCTL" region create "$name" 16k "${opt[@]}" &&
		 vc_bounded 60 "$SDSMCTL" region show "$name"; } 2>&1); rc=$?
	out1=$(on_node 1 "$SDSMCTL" region show "$name" 2>&1); rc1=$?
	listed=$(vc_bounded 60 "$SDSMCTL" region list 2>&1)
	sys=$(region_attr "$name" consistency)
	[ $rc = 0 ] && [ $rc1 = 0 ] || good=0
	# The line of create and the one of show (a '.' of NAME matches itself).
	[ "$(grep -c "^region $name: .*, consistency $want\$" <<< "$out")" = 2 ] ||
		good=0
	grep -q "^region $name: .*, consistency $want\$" <<< "$out1" || good=0
	# The last two columns: consistency, manager (none: interleave).
	[ "$(awk -v n="$name" '$2 == n { print $(NF - 1), $NF }' <<< "$listed")" = "$want interleave" ] ||
		good=0
	[ "$sys" = "$want" ] || good=0
	if [ $good = 1 ] && [ "$want" = release ]; then
		# The other consistency is another region: EEXIST, named.
		out=$(vc_bounded 60 "$SDSMCTL" region create "$name" 16k 2>&1); rc=$?
		if [ $rc != 1 ] || ! grep -q 'another size, policy, manager or consistency' <<< "$out"; then
			echo "# sequential create of release region $name: exit $rc: $out"
			good=0
		fi
	fi
	vc_bounded 60 "$SDSMCTL" region destroy "$name" 2>&1 | diag
	if [ $good = 1 ]; then
		ok "$t"
	else
		not_ok "$t"
		diag <<< "$out (exit $rc)"$'\n'"node 1: $out1 (exit $rc1)"$'\n'"$listed"$'\n'"sysfs: $sys"
	fi
}

# 10, 11: a named region's consistency, given or the default.
region_consistency sdsmctl.rel release \
	"region create --consistency=release: show (both nodes), list, sysfs say release"
region_consistency sdsmctl.seq default \
	"region create: the default consistency is sequential"

# 12: a bad consistency is a usage error, and nothing is created.
t="region create --consistency=bogus: usage error, no region"
if [ -n "$region_reason" ]; then
	skip_or_fail "$t" "$region_reason"
else
	err=$("$SDSMCTL" region create sdsmctl.bad 16k --consistency=bogus 2>&1 >/dev/null); rc=$?
	out=$("$SDSMCTL" region show sdsmctl.bad 2>&1); rc2=$?
	listed=$(vc_bounded 60 "$SDSMCTL" region list 2>&1); rc3=$?
	if [ $rc = 2 ] && [ "$(wc -l <<< "$err")" = 1 ] &&
	   grep -q -- '--consistency=bogus: expected sequential or release' <<< "$err" &&
	   [ $rc2 = 1 ] && [ $rc3 = 0 ] && ! grep -q 'sdsmctl\.bad' <<< "$listed"; then
		ok "$t"
	else
		not_ok "$t"
		diag <<< "create: $err (exit $rc)"$'\n'"show: $out (exit $rc2)"$'\n'"list: $listed (exit $rc3)"
		"$SDSMCTL" region destroy sdsmctl.bad > /dev/null 2>&1
	fi
fi

# 13: sdsmctl --consistency=release -- prog: the program's heap (libsdsm's
# allocator, as for sdsm_alloc(), here through libsdsm-preload.so) and its
# globals are release regions while it runs; with --no-preload,
# placement_prog's sdsm_alloc() gets release memory it can use.
t="--consistency=release -- prog: its heap and globals are release regions"
if [ -n "$placement_reason" ]; then
	skip_or_fail "$t" "$placement_reason"
else
	good=1
	rm -f "$T/go"
	"$SDSMCTL" --consistency=release -- "$PPROG" hold "$T/go" > "$T/out" 2> "$T/err" &
	held=$!
	ready_or_gone() {
		grep -q '^ready' "$T/out" || ! kill -0 "$held" 2>/dev/null
	}
	wait_until 120 ready_or_gone
	if grep -q '^ready' "$T/out"; then
		for r in $(cat "$SYSFS"/regions/*/name 2>/dev/null |
			   grep -E "^[ag]\.[0-9]+\.$held(\.|\$)"); do
			echo "$r $(region_attr "$r" consistency)"
		done > "$T/cons"
	else
		echo "# preload_prog hold: not ready (exited, or 120 s passed)"
		good=0
	fi
	touch "$T/go"
	wait "$held"; rc=$?
	held=
	[ $rc = 0 ] || { echo "# preload_prog hold: exit $rc"; good=0; }
	grep -qE "^a\.[0-9]+\.[0-9]+\.[0-9]+ release\$" "$T/cons" 2>/dev/null ||
		{ echo "# no heap chunk of release consistency"; good=0; }
	! grep -v ' release$' "$T/cons" 2>/dev/null | grep -q . ||
		{ echo "# a region of the program is not release"; good=0; }
	out=$(vc_bounded 120 "$SDSMCTL" --consistency=release --no-preload -l -- "$PROG" 6 2>&1); rc=$?
	if [ $rc != 0 ] || ! grep -qx 'homes: 0 0 0 0 0 0' <<< "$out"; then
		echo "# --no-preload placement_prog: exit $rc: $out"
		good=0
	fi
	if [ $good = 1 ]; then
		ok "$t"
	else
		not_ok "$t"
		cat "$T/cons" "$T/out" "$T/err" 2>/dev/null | diag
	fi
fi

# 14: region create --manager=1: create's line, list and sysfs name node 1;
# a policy that places every page itself, or a node past the cluster, is
# refused and creates nothing.
t="region create --manager: named in create, list, sysfs; refused where it cannot be"
if [ -n "$region_reason" ]; then
	skip_or_fail "$t" "$region_reason"
else
	good=1
	out=$(vc_bounded 60 "$SDSMCTL" region create sdsmctl.mgr 64k -l --manager=1 2>&1); rc=$?
	if [ $rc != 0 ] || ! grep -q '^region sdsmctl.mgr: .*policy local, .*, manager 1, consistency sequential$' <<< "$out"; then
		echo "# region create -l --manager=1: exit $rc: $out"
		good=0
	fi
	listed=$(vc_bounded 60 "$SDSMCTL" region list 2>&1)
	v=$(awk '$2 == "sdsmctl.mgr" { print $(NF - 1), $NF }' <<< "$listed")
	[ "$v" = "sequential 1" ] || { echo "# region list says '$v'"; good=0; }
	v=$(region_attr sdsmctl.mgr manager)
	[ "$v" = 1 ] || { echo "# sysfs manager '$v'"; good=0; }
	vc_bounded 60 "$SDSMCTL" region destroy sdsmctl.mgr 2>&1 | diag
	err=$(vc_bounded 60 "$SDSMCTL" region create sdsmctl.mgri 64k --interleave=all --manager=1 2>&1); rc=$?
	if [ $rc != 1 ] || ! grep -q 'no manager to name' <<< "$err"; then
		echo "# --interleave=all --manager=1: exit $rc: $err"
		good=0
	fi
	err=$(vc_bounded 60 "$SDSMCTL" region create sdsmctl.mgrn 64k -l --manager="$NR" 2>&1); rc=$?
	if [ $rc != 2 ] || ! grep -q -- "--manager=$NR: expected a node, 0 to $((NR - 1))" <<< "$err"; then
		echo "# -l --manager=$NR: exit $rc: $err"
		good=0
	fi
	for r in sdsmctl.mgri sdsmctl.mgrn; do
		v=$(region_attr $r name)
		[ "$v" = "no region $r in $SYSFS/regions" ] ||
			{ echo "# region $r was created"; good=0; }
	done
	if [ $good = 1 ]; then
		ok "$t"
	else
		not_ok "$t"
		diag <<< "$listed"
	fi
fi

# 15: a node leaves; sdsmctl on it says the module is not loaded; it joins
# again from a config file with `sdsmctl join`, and every node sees it up.
j=$((NR - 1))
cfg=$SDSM_SHARED/sdsmctl-join.$$.conf
{
	echo "# written by sdsmctl_tests.sh"
	for ((k = 0; k < NR; k++)); do
		echo "node $k 198.18.0.$((k + 1))"
	done
} > "$cfg"
good=1
on_node "$j" sdsm_unload > /dev/null 2>&1 || { echo "# rmmod on node $j failed"; good=0; }
out=$(on_node "$j" "$SDSMCTL" --show 2>&1); rc=$?
if [ $rc != 1 ] || ! grep -q 'sdsm module not loaded' <<< "$out"; then
	echo "# sdsmctl --show without the module: exit $rc"
	diag <<< "$out"
	good=0
fi
out=$(on_node "$j" "$SDSMCTL" join --module "$SDSM_KO" "$cfg" 2>&1); rc=$?
if [ $rc != 0 ]; then
	echo "# sdsmctl join on node $j: exit $rc"
	diag <<< "$out"
	good=0
fi
node_up() { [ "$(cat "$SYSFS/nodes/$1/state" 2>/dev/null)" = up ]; }
if ! wait_until 60 node_up "$j"; then
	echo "# node $j is not up on node 0 60 s after joining"
	good=0
fi
out=$(on_node "$j" cat "$SYSFS/node_id" 2>&1)
[ "$out" = "$j" ] || { echo "# node $j: sysfs node_id '$out'"; good=0; }
rm -f "$cfg"
if [ $good = 1 ]; then
	ok "a node leaves and joins again with sdsmctl join"
else
	not_ok "a node leaves and joins again with sdsmctl join"
	# Leave the cluster whole for whatever runs next.
	on_node "$j" sdsm_loaded || on_node "$j" sdsm_load > /dev/null 2>&1
fi
exit $failed
