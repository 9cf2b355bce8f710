#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of make check's result counting (tools/check-lib.sh), TAP: a stream
# that stops early, a stream without a plan, nested kselftest lines, TODO
# and SKIP directives, several streams in one log.  Then the cluster
# suites' runner (selftests/sdsm/tap_runner.sh) with stand-in tests, and
# run_all.sh's choice of suites and tests with stand-in suites.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

# judge LOG: count LOG as check.sh does; print "passed failed skipped".
judge() (
	passed=0 failed=0 skipped=0
	failures=()
	. "$top/tools/check-lib.sh"
	count_tap "$1" t > /dev/null
	check_plan t > /dev/null
	echo "$passed $failed $skipped"
)

# expect NAME "P F S" LOG-LINES...
expect() {
	local name=$1 want=$2 got
	shift 2
	printf '%s\n' "$@" > "$tmp/log"
	got=$(judge "$tmp/log")
	[ "$got" = "$want" ]
	ok $? "$name (passed failed skipped: want $want, got $got)"
}

echo "TAP version 13"
echo "1..21"
expect "a complete stream passes" "3 0 0" \
	"1..3" "ok 1 - a" "ok 2 - b" "ok 3 - c"
expect "a stream that stops after 3 of 10 fails" "3 1 0" \
	"1..10" "ok 1 - a" "ok 2 - b" "ok 3 - c"
expect "a stream with no plan fails" "2 1 0" \
	"ok 1 - a" "ok 2 - b"
expect "more results than planned fails" "3 1 0" \
	"1..2" "ok 1 - a" "ok 2 - b" "ok 3 - c"
expect "nested kselftest lines count once" "2 0 0" \
	"1..2" "# 1..4" "# ok 1 x" "# ok 2 y" "ok 1 - a" "ok 2 - b"
expect "plans of several streams add up" "4 1 2" \
	"1..2" "ok 1 - a" "not ok 2 - b" "1..4" "ok 1 - c" \
	"ok 2 - d # SKIP no device" "ok 3 - e" "not ok 4 - x # TODO 9" \
	"1..1" "ok 1 - f"
expect "a failure is a failure, TODO is skipped" "1 1 1" \
	"1..3" "ok 1 - a" "not ok 2 - b" "not ok 3 - c # TODO 14"
# make check ends with each failure and the last lines its test said (CI
# shows only the end of the output).
why() (
	passed=0 failed=0 skipped=0
	failures=() failures_why=()
	. "$top/tools/check-lib.sh"
	count_tap "$1" t > /dev/null
	printf '%s\n' "${failures_why[@]}"
)
{
	printf '%s\n' "1..3" "# said by a" "ok 1 - a"
	printf '# b%d\n' $(seq 0 16)
	printf '%s\n' "not ok 2 - b" "not ok 3 - c"
} > "$tmp/log"
got=$(why "$tmp/log" | tr '\n' ' ')
[ "$got" = "$(printf '# b%d ' $(seq 1 16)) " ]
ok $? "a failure keeps the last 16 lines its test said, and no other's (got '$got')"
# The cluster suites' runner, with the guest library's own vc_bounded, and
# tests that pass, skip, fail, hang and break the cluster.
runner() (
	. "$top/tools/vcluster/guest-lib.sh"
	SDSM_TEST_TIMEOUT=2
	restore_cluster() { [ ! -e "$tmp/broken" ]; }
	test_pass() { echo "fine"; }
	test_skip() { echo "needs 3 nodes"; return 77; }
	test_fail() { echo "wrong value"; return 1; }
	test_hang() { sleep 4; }
	test_break() { touch "$tmp/broken"; return 77; }
	# Leaves a process behind that holds stdout (the pipe of a caller).
	test_leak() { sleep 30 & echo "started $!" > "$tmp/leak"; }
	test_leakhang() { sleep 31 & echo "started $!" > "$tmp/leak2"; sleep 4; }
	. "$top/selftests/sdsm/tap_runner.sh"
	run_tap_tests "$@"
)
runner pass skip fail hang nosuch > "$tmp/run.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -qx 'ok 1 pass' "$tmp/run.log" &&
	grep -qx 'ok 2 skip # SKIP needs 3 nodes' "$tmp/run.log" &&
	grep -qx 'not ok 3 fail' "$tmp/run.log" &&
	grep -qx 'not ok 4 hang' "$tmp/run.log" &&
	grep -q '^# test timed out after 2s' "$tmp/run.log" &&
	grep -q '^not ok 5 nosuch' "$tmp/run.log"
ok $? "the suites' runner: pass, skip with its reason, fail, timeout, unknown"
got=$(judge "$tmp/run.log")
[ "$got" = "1 3 1" ]
ok $? "its stream keeps its plan (passed failed skipped: want 1 3 1, got $got)"
# On the debug kernel (RUN_ALL_BOUND_SCALE=4) a test's bound scales as the
# suites' do: test_hang's 4 s fit in 2 s times 3.
RUN_ALL_BOUND_SCALE=3 runner hang > "$tmp/scaled.log" 2>&1
rc=$?
[ $rc = 0 ] && grep -qx 'ok 1 hang' "$tmp/scaled.log"
ok $? "a test's bound scales with RUN_ALL_BOUND_SCALE (status $rc)"
# A failed test's output ends with each node's last kernel lines of sdsm
# (CI shows only the end of a failure); a passed or skipped test's does
# not.  run_on stands in for the nodes: node 1 does not answer.
ktail() (
	. "$top/tools/vcluster/guest-lib.sh"
	SDSM_TEST_TIMEOUT=2 SDSM_NR_NODES=2
	restore_cluster() { true; }
	test_pass() { echo "fine"; }
	test_skip() { echo "needs 3 nodes"; return 77; }
	test_fail() { echo "wrong value"; return 1; }
	. "$top/selftests/sdsm/tap_runner.sh"
	run_on() {
		[ "$1" = 0 ] || return 1
		printf 'sdsm: one\nsdsm: two\n'
	}
	run_tap_tests "$@"
)
ktail pass skip fail > "$tmp/run.log" 2>&1
[ "$(grep -c kernel: "$tmp/run.log")" = 3 ] &&
	grep -A3 '^# wrong value' "$tmp/run.log" | tr '\n' '|' |
	grep -qx '# wrong value|# node 0 kernel: sdsm: one|# node 0 kernel: sdsm: two|# node 1 kernel: (no answer)|'
rc=$?; [ $rc -eq 0 ] || sed "s/^/#   /" "$tmp/run.log"
ok $rc "a failed test's output ends with the nodes' kernel lines, a passed one's not"
# A test named in SDSM_SKIP_TESTS does not run (test_fail would fail):
# its line is a SKIP with SDSM_SKIP_WHY; the others run.
SDSM_SKIP_TESTS="fail hang" SDSM_SKIP_WHY="runs elsewhere" \
	runner pass fail > "$tmp/run.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -qx 'ok 1 pass' "$tmp/run.log" &&
	grep -qx 'ok 2 fail # SKIP runs elsewhere' "$tmp/run.log" &&
	! grep -q 'wrong value' "$tmp/run.log"
ok $? "the suites' runner leaves out the tests SDSM_SKIP_TESTS names (status $rc)"
runner break > "$tmp/run.log" 2>&1
grep -qx 'not ok 1 break' "$tmp/run.log"
ok $? "a skip that leaves the cluster broken is a failure"
# A test's leftover processes die with it, whether it ends or times out:
# a leftover holding the runner's stdout kept a pipe reading it open until
# the whole run's bound (the futex suite's stress test, 2026-11-23).
t0=$SECONDS
rm -f "$tmp/broken"
runner leak leakhang 2>&1 | cat > "$tmp/run.log"
took=$((SECONDS - t0))
leftover=
for f in leak leak2; do
	pid=$(sed -n 's/^started //p' "$tmp/$f" 2>/dev/null)
	# A killed orphan may stay a zombie until init reaps it: not alive.
	st=$([ -n "$pid" ] && ps -o stat= -p "$pid")
	case $st in ''|Z*) ;; *) leftover="$leftover $pid" ;; esac
done
[ "$took" -lt 20 ] && [ -z "$leftover" ] && grep -qx 'ok 1 leak' "$tmp/run.log" &&
	grep -qx 'not ok 2 leakhang' "$tmp/run.log"
rc=$?; [ $rc -eq 0 ] || sed "s/^/#   /" "$tmp/run.log"
ok $rc "a test's background processes do not outlive it (${took}s, left:${leftover:- none})"

# run_all.sh with every suite's script a stand-in that prints its
# arguments: RUN_ALL_TESTS passes each suite the tests named in it and
# runs no other suite; a name of no suite stops the run before any.
mkdir -p "$tmp/sel"
cp "$top/selftests/sdsm/run_all.sh" "$tmp/sel/"
for f in $(sed -n 's/^\t"[a-z-]*|[0-9]*|[^|]*|\([a-z_]*\.sh\).*/\1/p' \
		"$top/selftests/sdsm/run_all.sh"); do
	# The stand-in says which tests it would leave out; the word
	# run_tap_tests lets RUN_ALL_SKIP name its tests.
	printf '#!/bin/sh\n# run_tap_tests\necho "1..1"\necho "ok 1 $(basename "$0") $*${SDSM_SKIP_TESTS:+ skip: $SDSM_SKIP_TESTS ($SDSM_SKIP_WHY)}"\n' \
		> "$tmp/sel/$f"
	chmod +x "$tmp/sel/$f"
done
all=$(bash "$tmp/sel/run_all.sh" 2>&1)
rc=$?
suites=$(echo "$all" | grep -c '^ok 1 ')
[ $rc -eq 0 ] && [ "$suites" -ge 9 ] &&
	echo "$all" | grep -qx 'ok 1 run_cluster_tests.sh @mem'
ok $? "run_all.sh runs every suite with its own tests ($suites suites, status $rc)"
got=$(RUN_ALL_TESTS="futex:pingpong coherent-memory:mem_b
coherent-memory:mem_z" bash "$tmp/sel/run_all.sh" 2>&1 | grep '^ok 1 ')
rc=$?
[ "$got" = "$(printf '%s\n' 'ok 1 futex_tests.sh pingpong' \
	'ok 1 run_cluster_tests.sh mem_b mem_z')" ]
ok $? "RUN_ALL_TESTS runs the tests named, in their suites only (got: $(echo $got))"
got=$(RUN_ALL_TESTS="futex:pingpong fuzzz:run" bash "$tmp/sel/run_all.sh" 2>&1)
rc=$?
[ $rc -ne 0 ] && echo "$got" | grep -q "^Bail out! RUN_ALL_TESTS: 'fuzzz:run'" &&
	! echo "$got" | grep -q '^ok'
ok $? "a test named in no suite stops run_all.sh before any suite (status $rc)"
got=$(RUN_ALL_SKIP="futex:pingpong futex:stress fuzz:run" RUN_ALL_SKIP_WHY=why \
	RUN_ALL_SUITES="futex fuzz membership" bash "$tmp/sel/run_all.sh" 2>&1 |
	grep '^ok 1 ')
rc=$?
[ "$got" = "$(printf '%s\n' 'ok 1 run_cluster_tests.sh @membership' \
	'ok 1 futex_tests.sh  skip: pingpong stress (why)' \
	'ok 1 fuzz_tests.sh  skip: run (why)')" ]
ok $? "RUN_ALL_SKIP hands each suite the tests to leave out (got: $(echo $got))"
sed -i 's/^# run_tap_tests$//' "$tmp/sel/sdsmctl_tests.sh"
got=$(RUN_ALL_SKIP="sdsmctl:errors" bash "$tmp/sel/run_all.sh" 2>&1)
rc=$?
[ $rc -ne 0 ] && echo "$got" | grep -q "^Bail out! RUN_ALL_SKIP: suite sdsmctl cannot" &&
	! echo "$got" | grep -q '^ok'
ok $? "RUN_ALL_SKIP of a suite with a runner of its own stops run_all.sh (status $rc)"

# Every test a cluster suite defines runs in make check, and every test
# run_all.sh names exists.  A suite's tests are its test_NAME functions
# and those of the suite files it sources; what run_all.sh's table runs
# of it is the names its entries give, @GROUP for the suite's GROUP_TESTS
# list, or its ALL_TESTS for an entry without arguments.  The lists are
# read from the scripts' *_TESTS="..." assignments.  (mtu_mismatch, in
# run_cluster_tests.sh's list, was left out of run_all.sh's copy of that
# list from 2026-11-23 to 2026-12-02: make check never ran it.)
sel=$top/selftests/sdsm
# suite_files SCRIPT: the suite files SCRIPT sources, then SCRIPT.
suite_files() {
	sed -n 's/^\. "\$HERE\/\([a-z_]*\.sh\)".*/\1/p' "$sel/$1"
	echo "$1"
}
# lists SCRIPT: the *_TESTS assignments of its suite files, in that
# order, as "NAME=value" lines evaluated in a subshell.
lists() (
	for g in $(suite_files "$1"); do
		eval "$(awk '/^[A-Z_]*_TESTS="/ {p = 1} p {print} p && /"$/ {p = 0}' "$sel/$g")"
	done
	for v in $(compgen -v | grep '_TESTS$'); do
		echo "$v=$(echo ${!v})"
	done
)
# defined SCRIPT: the test names of its suite files, one a line.
defined() {
	local g
	for g in $(suite_files "$1"); do
		sed -n 's/^test_\([a-z0-9_]*\)() {$/\1/p' "$sel/$g"
	done | sort -u
}
bad=
for f in $(sed -n 's/^\t"[a-z-]*|[0-9]*|[^|]*|\([a-z_]*\.sh\).*/\1/p' "$sel/run_all.sh" | sort -u); do
	vars=$(lists "$f")
	ran=$(sed -n "s/^\t\"[a-z-]*|[0-9]*|[^|]*|$f\(.*\)\"$/\1/p" "$sel/run_all.sh" |
		while read -r args; do
			[ -n "$args" ] || args=@all
			for a in $args; do
				case $a in
				@*) g=${a#@}; g=${g^^}_TESTS
				    echo "$vars" | sed -n "s/^$g=//p" | tr ' ' '\n' ;;
				*) echo "$a" ;;
				esac
			done
		done | grep . | sort -u)
	def=$(defined "$f")
	miss=$(comm -23 <(echo "$def") <(echo "$ran") | grep . | tr '\n' ' ')
	none=$(comm -13 <(echo "$def") <(echo "$ran") | grep . | tr '\n' ' ')
	[ -z "$miss" ] || bad="$bad $f never runs: $miss;"
	[ -z "$none" ] || bad="$bad $f has no test: $none;"
done
[ -z "$bad" ]
ok $? "make check runs every test of every cluster suite, and no test that is not there${bad:+:$bad}"

[ $fails -eq 0 ]
