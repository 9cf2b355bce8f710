# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The result counting of tools/check.sh (`make check`), sourced by it and by
# tests/build/test_tap.sh.  The caller sets passed=0 failed=0 skipped=0,
# failures=() and failures_why=() before use.  failures_why[i] holds the
# last diagnostic lines a TAP stream printed before failure i, if any.

note() { printf '# %s\n' "$*"; }

# result NAME STATUS: record one non-TAP test.
result() {
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		failures+=("$1")
		failures_why+=("")
		echo "not ok - $1"
	fi
}

# count_tap LOG PREFIX: add the top-level TAP results found in LOG to the
# totals and leave their number in $tap_n, the sum of the top-level plans
# ("1..N") in $tap_plan and the number of plans in $tap_nplans (no subshell:
# the totals are globals).  Nested kselftest lines start with '#' and are not
# counted twice.
count_tap() {
	local line name n=0 diag=()
	tap_plan=0 tap_nplans=0
	while IFS= read -r line; do
		if [[ $line =~ ^1\.\.([0-9]+) ]]; then
			tap_plan=$((tap_plan + BASH_REMATCH[1]))
			tap_nplans=$((tap_nplans + 1))
			continue
		fi
		case $line in
		"not ok "*)
			n=$((n + 1))
			name=${line#not ok }
			# SKIP, and TODO (known unfinished work, see
			# selftests/sdsm/run_all.sh), count as skipped.
			if [[ $line =~ \#[[:space:]]*(SKIP|skip|TODO|todo) ]]; then
				skipped=$((skipped + 1))
			else
				failed=$((failed + 1))
				failures+=("$2: $name")
				failures_why+=("$(printf '%s\n' "${diag[@]}")")
			fi
			diag=()
			;;
		"ok "*)
			n=$((n + 1))
			if [[ $line =~ \#[[:space:]]*(SKIP|skip) ]]; then
				skipped=$((skipped + 1))
			else
				passed=$((passed + 1))
			fi
			diag=()
			;;
		"#"*)
			# The last 16 lines a test said (why it failed; on 3
			# nodes, an unload and the restore after it say 7).
			diag+=("${line:0:300}")
			[ ${#diag[@]} -gt 16 ] && diag=("${diag[@]:1}")
			;;
		esac
	done < "$1"
	tap_n=$n
}

# check_plan WHAT: after count_tap, one more failure if the streams' plans do
# not add up to the results seen: a test program that died after 3 of its 10
# tests, or a stream with no plan at all, must not pass.
check_plan() {
	if [ "$tap_nplans" -eq 0 ]; then
		result "$1: TAP plan present" 1
	elif [ "$tap_plan" -ne "$tap_n" ]; then
		result "$1: TAP plans announce $tap_plan results, got $tap_n" 1
	fi
}
