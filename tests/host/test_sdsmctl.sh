#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of the sdsmctl binary (tools/sdsmctl/sdsmctl): exit codes and
# one-line messages for bad flags, node lists and values; SDSM_POLICY and
# SDSM_CONSISTENCY handed to the command; --hardware, --show and stat
# against a fixture sysfs tree (SDSM_SYSFS_ROOT); join --dry-run with good
# and bad config files; and the man pages render without warnings.  No module and no network is used.
#
# TAP 13 with the options of test_proto (--count, --first N, --prefix STR,
# --no-plan) so tests/host/run.sh joins it to the other streams.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SDSMCTL=${SDSMCTL:-$ROOT/tools/sdsmctl/sdsmctl}

# Test names, in order; the bodies are the functions t_<index>.
NAMES=(
	"sdsmctl: --help and --version exit 0"
	"sdsmctl: unknown and incomplete options exit 2, one line"
	"sdsmctl: bad node lists exit 2, one line"
	"sdsmctl: node lists checked against the live nr_nodes"
	"sdsmctl: conflicting or misplaced options exit 2"
	"sdsmctl: SDSM_POLICY handed to the command"
	"sdsmctl: command exit status, 126 and 127"
	"sdsmctl: --hardware from sysfs, distances"
	"sdsmctl: --hardware and --show without the module"
	"sdsmctl: --show reports policy, node, nodes up"
	"sdsmctl: stat reads counters, bad values exit 2"
	"sdsmctl: region subcommands, bad usage, no module"
	"sdsmctl: join --dry-run builds the module command"
	"sdsmctl: join rejects bad config files with file:line"
	"sdsmctl: man pages render without warnings"
	"sdsmctl: a policy runs the command under libsdsm-preload.so"
	"sdsmctl: -N/--cpunodebind hands SDSM_CPUNODES and the shim to the command; sdsmd refuses without the module"
	"sdsmctl: --consistency hands SDSM_CONSISTENCY to the command, bad values exit 2"
)

first=1 prefix='' plan=1
while [ $# -gt 0 ]; do
	case $1 in
	--count) echo ${#NAMES[@]}; exit 0 ;;
	--first) first=$2; shift ;;
	--prefix) prefix=$2; shift ;;
	--no-plan) plan=0 ;;
	*) echo "usage: $0 [--count] [--first N] [--prefix STR] [--no-plan]" >&2
	   exit 2 ;;
	esac
	shift
done

TMP=$(mktemp -d /tmp/sdsm-sdsmctl.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
FIX=$TMP/sysfs
NOFIX=$TMP/nonexistent

put() {
	mkdir -p "$(dirname "$FIX/$1")"
	printf '%s\n' "$2" > "$FIX/$1"
}

put node_id 1
put nr_nodes 3
put nodes/0/addr 198.18.0.1; put nodes/0/state up; put nodes/0/rtt_us 95
put nodes/0/tx_msgs 10; put nodes/0/rx_msgs 11
put nodes/0/tx_bytes 1000; put nodes/0/rx_bytes 1100
put nodes/0/homed_pages 42; put nodes/0/free_kb 1024
put nodes/1/addr 198.18.0.2; put nodes/1/state self; put nodes/1/rtt_us 0
put nodes/2/addr 198.18.0.3; put nodes/2/state down; put nodes/2/rtt_us 0
put stats/read_faults_remote 7
put stats/fault_latency_hist "$(printf '0-1 5\n1-2 0\n2- 4')"
put regions/1/name shared.a
put regions/1/size 65536
put regions/1/uid 1000
put regions/1/mode 0640
put regions/1/consistency release
put regions/1/manager 1

export SDSM_SYSFS_ROOT=$FIX SDSM_DEVICE=$NOFIX/sdsm
unset SDSM_POLICY SDSM_CONSISTENCY

fail=0
say() { echo "#   $*"; fail=1; }

# run CMD...: sets rc, out, err, errlines
run() {
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
	errlines=$(wc -l < "$TMP/err")
}

# expect RC PATTERN CMD...: exit status RC, stderr one line matching PATTERN
expect() {
	local want=$1 pat=$2
	shift 2
	run "$@"
	if [ "$rc" != "$want" ]; then
		say "$*: exit $rc, want $want (stderr: $err)"
	elif [ "$errlines" != 1 ]; then
		say "$*: $errlines stderr lines, want 1: $err"
	elif ! grep -qE -- "$pat" <<< "$err"; then
		say "$*: stderr '$err' does not match '$pat'"
	fi
}

# expect_out RC PATTERN CMD...: exit RC and stdout matching PATTERN
expect_out() {
	local want=$1 pat=$2
	shift 2
	run "$@"
	if [ "$rc" != "$want" ]; then
		say "$*: exit $rc, want $want (stderr: $err)"
	elif ! grep -qE -- "$pat" <<< "$out"; then
		say "$*: stdout does not match '$pat':"
		sed 's/^/#     /' "$TMP/out"
	fi
}

t_0() {
	expect_out 0 '^Usage: sdsmctl' "$SDSMCTL" --help
	expect_out 0 '^sdsmctl \(sdsm\) [0-9]' "$SDSMCTL" --version
	expect_out 0 'interleave' "$SDSMCTL" -h
}

t_1() {
	expect 2 "unknown option.* '--foo'" "$SDSMCTL" --foo
	expect 2 "unknown option '-x'" "$SDSMCTL" -x true
	expect 2 "'--interleave' needs a value" "$SDSMCTL" --interleave
	expect 2 "'-m' needs a value" "$SDSMCTL" -m
	expect 2 "no command given" "$SDSMCTL"
	expect 2 "no command to run under --interleave" "$SDSMCTL" -i all
	expect 2 "unexpected value '--hardwar=1'" "$SDSMCTL" --hardwar=1
	expect 2 "unknown option or unexpected value '--frob'" "$SDSMCTL" --frob
	expect 2 "block-size" "$SDSMCTL" -i all --block-size=5000 true
	expect 2 "block-size" "$SDSMCTL" -i all --block-size=x true
}

t_2() {
	local l
	for l in 5-2 0,,1 x '!' '' '1,' -1 0x1 '!0-2' 99999999999999999999 2-; do
		expect 2 "^sdsmctl: --interleave=" "$SDSMCTL" --interleave="$l" true
	done
	expect 2 "range 2-1 goes backwards" "$SDSMCTL" -m 2-1 true
	expect 2 "preferred takes one node" "$SDSMCTL" -p 0,1 true
	expect 2 "node number too large" "$SDSMCTL" -i 99999999999999999999 true
}

t_3() {
	# The fixture cluster has 3 nodes.
	expect 2 "node 3 out of range \(nodes are 0-2\)" "$SDSMCTL" -i 3 true
	expect 2 "out of range" "$SDSMCTL" -m 0-3 true
	expect 2 "out of range" "$SDSMCTL" -p 7 true
	# Without the module the limit is SDSM_MAX_NODES (32).
	SDSM_SYSFS_ROOT=$NOFIX expect 2 "node 32 out of range \(nodes are 0-31\)" \
		"$SDSMCTL" -i 32 true
	SDSM_SYSFS_ROOT=$NOFIX run "$SDSMCTL" --no-preload -i 31 true
	[ "$rc" = 0 ] || say "-i 31 without the module: exit $rc: $err"
}

t_4() {
	expect 2 "only one of" "$SDSMCTL" -i all -m 1 true
	expect 2 "only one of" "$SDSMCTL" -l -p 1 true
	expect 2 "--hardware takes no command" "$SDSMCTL" --hardware ls
	expect 2 "--show takes no command" "$SDSMCTL" --show ls
	expect 2 "--hardware takes no other option" "$SDSMCTL" -H -s
	expect 2 "cannot precede 'stat'" "$SDSMCTL" -i all stat
}

t_5() {
	local prog='printf "%s" "${SDSM_POLICY-unset}"'
	expect_out 0 '^interleave:all$' "$SDSMCTL" --no-preload --interleave=all -- sh -c "$prog"
	expect_out 0 '^interleave:0,2$' "$SDSMCTL" --no-preload -i 0,2 sh -c "$prog"
	expect_out 0 '^bind:1-2$' "$SDSMCTL" --no-preload --membind='!0' -- sh -c "$prog"
	expect_out 0 '^preferred:2$' "$SDSMCTL" --no-preload --preferred=2 sh -c "$prog"
	expect_out 0 '^local$' "$SDSMCTL" --no-preload --localalloc sh -c "$prog"
	expect_out 0 '^interleave:0-2/65536$' "$SDSMCTL" --no-preload --block-size=64k -i 0-2 \
		sh -c "$prog"
	expect_out 0 '^unset$' "$SDSMCTL" -- sh -c "$prog"
	SDSM_POLICY=bind:1 expect_out 0 '^bind:1$' "$SDSMCTL" sh -c "$prog"
	# Parsing stops at the command: its options are its own.
	expect_out 0 '^-i x$' "$SDSMCTL" --no-preload -l echo -i x
}

t_6() {
	run "$SDSMCTL" --no-preload -i all sh -c 'exit 7'
	[ "$rc" = 7 ] || say "exit status not passed on: $rc"
	expect 127 "no-such-command-xyz: No such file" "$SDSMCTL" --no-preload -i all \
		no-such-command-xyz
	expect 126 "Permission denied" "$SDSMCTL" --no-preload -l "$FIX/node_id"
}

t_7() {
	expect_out 0 '^available: 3 nodes \(0-2\)$' "$SDSMCTL" --hardware
	grep -qE '^this node: 1$' <<< "$out" || say "no 'this node: 1'"
	grep -qE '^0 +198\.18\.0\.1 +up +95 +42 +1024 +10 +11 +1000 +1100$' \
		<<< "$out" || say "node 0 row wrong"
	grep -qE '^2 +198\.18\.0\.3 +down +0 +- +- +- +- +- +-$' <<< "$out" ||
		say "node 2 row wrong"
	# Distances: self 10, node 0 the nearest peer up: 20, node 2 down.
	grep -qE '^ +0: +10 +20 +-$' <<< "$out" || say "distance row 0 wrong"
	grep -qE '^ +1: +20 +10 +-$' <<< "$out" || say "distance row 1 wrong"
	grep -qE '^ +2: +- +- +10$' <<< "$out" || say "distance row 2 wrong"
	[ "$fail" = 0 ] || sed 's/^/#     /' "$TMP/out"
	# Round trips of the TCG test cluster (ms): near and far stay apart
	# (an absolute scale made both 254).  Node 2 at 2.5 times node 0's
	# round trip: 50.
	put nodes/0/rtt_us 2000; put nodes/2/state up; put nodes/2/rtt_us 5000
	expect_out 0 '^ +1: +20 +10 +50$' "$SDSMCTL" --hardware
	grep -qE '^ +2: +- +50 +10$' <<< "$out" || say "slow distance row 2 wrong"
	# A peer 100 times farther saturates at 254.
	put nodes/2/rtt_us 200000
	expect_out 0 '^ +1: +20 +10 +254$' "$SDSMCTL" --hardware
	put nodes/0/rtt_us 95; put nodes/2/state down; put nodes/2/rtt_us 0
	put nodes/0/rtt_us 12x
	expect 1 "nodes/0/rtt_us: not a number" "$SDSMCTL" -H
	put nodes/0/rtt_us 95
}

t_8() {
	SDSM_SYSFS_ROOT=$NOFIX expect 1 "sdsm module not loaded" "$SDSMCTL" -H
	SDSM_SYSFS_ROOT=$NOFIX run "$SDSMCTL" --show
	[ "$rc" = 1 ] || say "--show without the module: exit $rc"
	grep -q '^this node: - (.*not loaded)' <<< "$out" ||
		say "--show without the module: $out"
}

t_9() {
	SDSM_POLICY=interleave:0,1 expect_out 0 \
		'^policy: interleave:0-1 \(from SDSM_POLICY=interleave:0,1\)$' \
		"$SDSMCTL" --show
	grep -q '^this node: 1$' <<< "$out" || say "--show: no node"
	grep -q '^nodes up: 0-1$' <<< "$out" || say "--show: nodes up wrong"
	grep -q '^features: - (.*missing, but the sdsm module is loaded)$' \
		<<< "$out" || say "--show: features line: $out"
	expect_out 0 '^policy: local \(default' "$SDSMCTL" -s
	expect_out 0 '^policy: bind:2 \(from --membind\)$' "$SDSMCTL" -m 2 -s
	SDSM_POLICY=bind:9 run "$SDSMCTL" --show
	[ "$rc" = 1 ] && grep -q 'SDSM_POLICY: .*out of range' <<< "$err" ||
		say "--show with a bad SDSM_POLICY: exit $rc: $err"
}

t_10() {
	expect_out 0 '^read_faults_remote +7$' "$SDSMCTL" stat
	expect_out 0 '^ +2- +4$' "$SDSMCTL" stat
	grep -qE '^upgrades +-$' <<< "$out" || say "stat: missing counter not '-'"
	grep -qE '^0 +up +10 +11 +1000 +1100$' <<< "$out" || say "stat: node 0"
	grep -qE '^ +0-1 +5$' <<< "$out" || say "stat: histogram"
	expect_out 0 'change over 0.1 s' "$SDSMCTL" stat -i 0.1 -c 2
	n=$(grep -c '^read_faults_remote' <<< "$out")
	[ "$n" = 2 ] || say "stat -c 2 printed $n reports"
	grep -qE '^read_faults_remote +0$' <<< "$out" ||
		say "stat: second report is not a delta"
	expect 2 "stat -i" "$SDSMCTL" stat -i 0
	expect 2 "stat -i" "$SDSMCTL" stat -i x
	expect 2 "stat -c" "$SDSMCTL" stat -c 0
	expect 2 "stat -c" "$SDSMCTL" stat -c 5x
	expect 2 "needs a value" "$SDSMCTL" stat -c
	expect 2 "unexpected argument 'foo'" "$SDSMCTL" stat foo
	expect 2 "unknown option" "$SDSMCTL" stat --bogus
	SDSM_SYSFS_ROOT=$NOFIX expect 1 "not loaded" "$SDSMCTL" stat
}

t_11() {
	expect_out 0 '^1 +shared\.a +65536 +- +- +- +1000 +- +0640 +release +1$' "$SDSMCTL" region list
	grep -qE '^id +name .* mode +consistency +manager$' <<< "$out" || say "region list: header: $out"
	expect 2 "region needs list" "$SDSMCTL" region
	expect 2 "unknown subcommand 'frob'" "$SDSMCTL" region frob
	expect 2 "region list takes no argument" "$SDSMCTL" region list x
	expect 2 "region create needs NAME SIZE" "$SDSMCTL" region create a
	expect 2 "bad size '12q'" "$SDSMCTL" region create a 12q
	expect 2 "bad size '0'" "$SDSMCTL" region create a 0
	expect 2 "only one of" "$SDSMCTL" region create a 4k -i all -m 1
	expect 2 "out of range" "$SDSMCTL" region create a 4k --membind=5
	expect 2 "bad mode '0800'" "$SDSMCTL" region create a 4k --mode 0800
	expect 2 "bad mode '1777'" "$SDSMCTL" region create a 4k --mode 1777
	expect 2 "bad mode ''" "$SDSMCTL" region create a 4k --mode ''
	expect 2 "option '--mode' needs a value" "$SDSMCTL" region create a 4k --mode
	expect 2 "region create: --manager=3: expected a node, 0 to 2" \
		"$SDSMCTL" region create a 4k -l --manager=3
	expect 2 "region create: --manager=-1: expected a node" \
		"$SDSMCTL" region create a 4k -l --manager=-1
	expect 2 "region create: --manager=x: expected a node" \
		"$SDSMCTL" region create a 4k -l --manager=x
	expect 2 "option '--manager' needs a value" "$SDSMCTL" region create a 4k --manager
	expect 2 "region show needs NAME" "$SDSMCTL" region show
	expect 2 "region destroy needs NAME" "$SDSMCTL" region destroy a b
	expect 1 "missing, but the sdsm module is loaded" "$SDSMCTL" region \
		create a 4k -i all
	expect 1 "missing, but the sdsm module is loaded" "$SDSMCTL" region show a
	SDSM_SYSFS_ROOT=$NOFIX expect 1 "not loaded" "$SDSMCTL" region destroy a
	SDSM_SYSFS_ROOT=$NOFIX expect 1 "not loaded" "$SDSMCTL" region list
	mv "$FIX/regions" "$FIX/regions.off"
	expect 1 "module has no regions" "$SDSMCTL" region list
	mv "$FIX/regions.off" "$FIX/regions"
}

t_12() {
	local c=$TMP/good.conf
	printf '# test cluster\nport 18611\nnode 0 198.18.0.1\nnode 1 198.18.0.2\nnode 2 198.18.0.3\n' > "$c"
	expect_out 0 '^insmod /x/sdsm.ko node_id=1 nodes=198.18.0.1,198.18.0.2,198.18.0.3 port=18611$' \
		"$SDSMCTL" join --node 1 --module /x/sdsm.ko --dry-run "$c"
	expect_out 0 '^modprobe sdsm node_id=2 nodes=198.18.0.1,198.18.0.2,198.18.0.3 port=18611$' \
		"$SDSMCTL" join --dry-run --node=2 "$c"
	# This node found by a local address: loopback is one.
	printf 'node 0 198.18.0.1\nnode 1 127.0.0.1\n' > "$c"
	expect_out 0 '^modprobe sdsm node_id=1 nodes=198.18.0.1,127.0.0.1$' \
		"$SDSMCTL" join --dry-run "$c"
	printf 'node 0 198.18.0.201\nnode 1 198.18.0.202\n' > "$c"
	expect 1 "no address of this machine is listed; use --node" \
		"$SDSMCTL" join --dry-run "$c"
	expect 1 "--node 2: .* lists nodes 0-1" "$SDSMCTL" join --dry-run --node 2 "$c"
	expect 2 "join --node: 'x'" "$SDSMCTL" join --node x "$c"
	expect 2 "join needs one CONFIG" "$SDSMCTL" join
	expect 2 "join needs one CONFIG" "$SDSMCTL" join a b
	expect 2 "unknown option" "$SDSMCTL" join --frob "$c"
	expect 2 "'--module' needs a value" "$SDSMCTL" join "$c" --module
	expect 1 "nonexistent.conf: No such file" "$SDSMCTL" join "$TMP/nonexistent.conf"
}

t_13() {
	local c=$TMP/bad.conf
	bad() {
		printf "$1" > "$c"
		expect 1 "$2" "$SDSMCTL" join --dry-run --node 0 "$c"
	}
	bad 'node 0 198.18.0.1\nnode 0 198.18.0.2\n' 'bad.conf:2: node 0 listed twice'
	bad 'node 0 198.18.0.1\nnode 2 198.18.0.3\n' 'bad.conf: node 1 missing'
	bad 'node 0 198.18.0.999\n' "bad.conf:1: '198.18.0.999' is not an IPv4 address"
	bad 'node 0 198.18.0.1\nport 70000\n' "bad.conf:2: expected 'port N'"
	bad 'node 0 198.18.0.1\nbogus 1\n' "bad.conf:2: unknown statement 'bogus'"
	bad '' 'bad.conf: no node lines'
	bad 'node 99 198.18.0.1\n' "bad.conf:1: node id '99' is not 0..31"
	bad 'node 0 198.18.0.1\nnode 1 198.18.0.1\n' 'same address'
}

t_14() {
	local m out
	for m in "$ROOT"/userlib/man/*.3 "$ROOT"/tools/sdsmctl/sdsmctl.8; do
		[ -f "$m" ] || { say "missing man page $m"; continue; }
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
		[ -z "$out" ] || say "$m: $out"
		for s in NAME SYNOPSIS DESCRIPTION; do
			grep -q "^\.SH $s" "$m" || say "$m: no $s section"
		done
	done
	ls "$ROOT"/userlib/man/*.3 > /dev/null 2>&1 || say "no section 3 pages"
}

t_15() {
	local libm pre
	libm=$(gcc -print-file-name=libm.so.6)
	# Without the module the shim refuses, naming the cause, exit 127.
	expect 127 "^libsdsm-preload: cannot place this program in sdsm memory: .*nonexistent/sdsm: missing" \
		"$SDSMCTL" -i all true
	# In front of an existing LD_PRELOAD, once; ASLR off for the command.
	pre=$(SDSM_PRELOAD_LIB=$libm LD_PRELOAD=/x.so "$SDSMCTL" -i all -- \
		sh -c 'echo "$LD_PRELOAD"; cat /proc/self/personality' 2>/dev/null)
	[ "$(head -1 <<< "$pre")" = "$libm:/x.so" ] || say "LD_PRELOAD: $pre"
	[ $((0x$(tail -1 <<< "$pre") & 0x40000)) != 0 ] || say "ASLR on: $pre"
	pre=$(SDSM_PRELOAD_LIB=$libm LD_PRELOAD=$libm "$SDSMCTL" -l -- \
		sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
	[ "$pre" = "$libm" ] || say "added twice: $pre"
	expect 1 "SDSM_PRELOAD_LIB=/nonexistent.so: No such file" \
		env SDSM_PRELOAD_LIB=/nonexistent.so "$SDSMCTL" -i all true
	expect 2 "--no-preload needs a policy option" "$SDSMCTL" --no-preload true
	expect_out 0 '^unset$' "$SDSMCTL" -- sh -c 'printf "%s" "${LD_PRELOAD-unset}"'
}

t_16() {
	local libm pre
	libm=$(gcc -print-file-name=libm.so.6)
	expect 2 "--cpunodebind=: empty node list" "$SDSMCTL" --cpunodebind= true
	expect 2 "--cpunodebind=3: node 3 out of range" "$SDSMCTL" -N 3 true
	expect 2 "--cpunodebind=x: " "$SDSMCTL" -N x true
	expect 2 "no command to run under --cpunodebind" "$SDSMCTL" -N all
	expect 2 "--cpunodebind needs a command" "$SDSMCTL" -N all --show
	expect 2 "--cpunodebind needs libsdsm-preload.so" \
		"$SDSMCTL" -N all --no-preload -i all true
	# The node list, normalised; the shim even without a memory policy.
	pre=$(SDSM_PRELOAD_LIB=$libm "$SDSMCTL" -N '!1' -- \
		sh -c 'echo "$SDSM_CPUNODES ${SDSM_POLICY-unset} $LD_PRELOAD"' 2>/dev/null)
	[ "$pre" = "0,2 unset $libm" ] || say "-N '!1': $pre"
	pre=$(SDSM_PRELOAD_LIB=$libm "$SDSMCTL" --cpunodebind=all -i 0-1 -- \
		sh -c 'echo "$SDSM_CPUNODES $SDSM_POLICY"' 2>/dev/null)
	[ "$pre" = "0-2 interleave:0-1" ] || say "-N all -i 0-1: $pre"
	# Without the module the shim refuses, naming the cause, exit 127.
	expect 127 "^libsdsm-preload: cannot place this program in sdsm memory: .*nonexistent/sdsm: missing" \
		"$SDSMCTL" -N all true
	# The agent: one line and status 1 without the module, 2 on usage.
	expect 1 "^sdsmd: .*nonexistent/sdsm: missing" "$ROOT/tools/sdsmd/sdsmd"
	expect 2 "^usage: sdsmd" "$ROOT/tools/sdsmd/sdsmd" --bogus
}

t_17() {
	local libm pre prog='printf "%s %s %s" "${SDSM_CONSISTENCY-unset}" "${SDSM_POLICY-unset}" "${LD_PRELOAD-unset}"'
	libm=$(gcc -print-file-name=libm.so.6)
	local v
	for v in bogus '' Release 'release ' seq; do
		expect 2 "^sdsmctl: --consistency=$v: expected sequential or release" \
			"$SDSMCTL" --consistency="$v" true
	done
	expect 2 "'--consistency' needs a value" "$SDSMCTL" --consistency
	expect 2 "no command to run under --consistency" "$SDSMCTL" --consistency=release
	expect 2 "--consistency cannot precede 'region'" "$SDSMCTL" --consistency=release region list
	expect 2 "--hardware takes no other option" "$SDSMCTL" -H --consistency=release
	# A job of release consistency: both reach the shim.
	pre=$(SDSM_PRELOAD_LIB=$libm "$SDSMCTL" -N all --consistency=release -- \
		sh -c 'echo "$SDSM_CPUNODES $SDSM_CONSISTENCY"' 2>/dev/null)
	[ "$pre" = "0-2 release" ] || say "-N all --consistency=release: $pre"
	# Alone or with a policy, without the preload library or with it.
	expect_out 0 '^release unset unset$' "$SDSMCTL" --no-preload --consistency=release -- sh -c "$prog"
	expect_out 0 '^sequential interleave:all unset$' "$SDSMCTL" --no-preload -i all \
		--consistency=sequential sh -c "$prog"
	expect_out 0 '^unset unset unset$' "$SDSMCTL" -- sh -c "$prog"
	pre=$(SDSM_PRELOAD_LIB=$libm "$SDSMCTL" --consistency=release -- sh -c "$prog" 2>/dev/null)
	[ "$pre" = "release unset $libm" ] || say "--consistency=release: $pre"
	pre=$(SDSM_PRELOAD_LIB=$libm "$SDSMCTL" --consistency=release -l -- sh -c "$prog" 2>/dev/null)
	[ "$pre" = "release local $libm" ] || say "--consistency=release -l: $pre"
	# Without the module the preload library refuses, exit 127.
	expect 127 "^libsdsm-preload: cannot place this program in sdsm memory: .*nonexistent/sdsm: missing" \
		"$SDSMCTL" --consistency=release true
	# --show: the option, else SDSM_CONSISTENCY, else the default.
	run "$SDSMCTL" --show
	grep -qx 'consistency: sequential (default: SDSM_CONSISTENCY not set)' <<< "$out" ||
		say "--show: default consistency: $out"
	run "$SDSMCTL" --consistency=release --show
	grep -qx 'consistency: release (from --consistency)' <<< "$out" ||
		say "--show --consistency=release: $out"
	SDSM_CONSISTENCY=release run "$SDSMCTL" --show
	grep -qx 'consistency: release (from SDSM_CONSISTENCY)' <<< "$out" ||
		say "--show with SDSM_CONSISTENCY=release: $out"
	SDSM_CONSISTENCY=frob run "$SDSMCTL" --show
	[ "$rc" = 1 ] && grep -q "SDSM_CONSISTENCY: 'frob' is neither sequential nor release" <<< "$err" ||
		say "--show with a bad SDSM_CONSISTENCY: exit $rc: $err"
	# region create: the option checked before the module is asked.
	expect 2 "region create: --consistency=bogus: expected sequential or release" \
		"$SDSMCTL" region create a 4k --consistency=bogus
	expect 2 "region create: --consistency=: expected" \
		"$SDSMCTL" region create a 4k --consistency=
	expect 2 "option '--consistency' needs a value" "$SDSMCTL" region create a 4k --consistency
	expect 1 "missing, but the sdsm module is loaded" "$SDSMCTL" region \
		create a 4k --consistency=release
	expect_out 0 'consistency=C' "$SDSMCTL" --help
}

if [ ! -x "$SDSMCTL" ]; then
	echo "$SDSMCTL not built" >&2
	exit 1
fi
[ "$plan" = 1 ] && printf 'TAP version 13\n1..%d\n' ${#NAMES[@]}
failed=0
for i in "${!NAMES[@]}"; do
	fail=0
	"t_$i"
	if [ "$fail" = 0 ]; then
		echo "ok $((first + i)) - $prefix${NAMES[$i]}"
	else
		echo "not ok $((first + i)) - $prefix${NAMES[$i]}"
		failed=1
	fi
done
exit $failed
