#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ab.sh - time jobs of two builds of sdsm's user space in one cluster,
# alternating, so that both meet the same host.  See
# Documentation/performance.rst, "A against B in one cluster".
#
#   tools/bench/ab.sh [--nodes N] [--rounds R] [--timeout SEC] [--out DIR]
#                     [--modules] [--with 'SDSMCTL OPTIONS']...
#                     --job 'PROG ARGS'... A [B]
#   tools/bench/ab.sh --report DIR       (redo the table of an earlier run)
#
# A and B are git revisions (B defaults to the working tree, "."): each
# is checked out in .cache/ab/<commit> and its user space and bench
# programs built there.  PROG is a program of tools/bench/build (pheat,
# pmatmul, ...).  Every job runs natively once a round, then under
# `sdsmctl OPTIONS --` for each --with (default: -N 0 and -N 0,1) with A's
# sdsmctl, library, shim, sdsmd and program and with B's, alternating
# which goes first from round to round.  Both run on the working tree's
# module (kmod/sdsm.ko), or with --modules each on its own tree's, loaded
# on every node before each of its runs.  Output: DIR/table.txt (also printed), the runs
# in DIR/runs.txt; exit 0 when every run ended with the native checksum,
# 1 when one did not, vcluster's status when the cluster failed.

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

msg() {
	echo "ab: $*" >&2
}

usage() {
	sed -n '8,12p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# ---- in the guest (node 0) ------------------------------------------

# The seconds= and checksum= of a job's output in $1, as "S C" ("- -"
# for what is missing).
ab_parse() {
	local s c
	s=$(sed -n 's/^seconds=\([0-9.]*\)$/\1/p' "$1" | head -n 1)
	c=$(sed -n 's/^checksum=\([0-9a-f]*\)$/\1/p' "$1" | head -n 1)
	echo "${s:--} ${c:--}"
}

# sdsmd of tree $1 on every node, stopped by pid; ready once node 0 has
# every node's inbox region sdsmd.K.
ab_has_region() {
	grep -qx "$1" /sys/kernel/sdsm/regions/*/name 2> /dev/null
}

ab_agents_start() {
	local k
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		# shellcheck disable=SC2016
		on_node "$k" sh -c '"$1" > /tmp/ab-sdsmd.log 2>&1 < /dev/null &
			echo $! > /tmp/ab-sdsmd.pid' sh "$1/tools/sdsmd/sdsmd"
	done
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		wait_until 60 ab_has_region "sdsmd.$k" && continue
		echo "# sdsmd of $1 did not start on node $k:" \
			"$(on_node "$k" tail -n 2 /tmp/ab-sdsmd.log | tr '\n' ' ')"
		return 1
	done
}

ab_agents_stop() {
	local k
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		# shellcheck disable=SC2016
		on_node "$k" sh -c 'f=/tmp/ab-sdsmd.pid; [ -s "$f" ] &&
			kill "$(cat "$f")"; rm -f "$f"'
	done
	# A job's regions go with its launcher; sdsmd's with sdsmd.
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		wait_until 30 sh -c '! grep -qx "sdsmd.$1" /sys/kernel/sdsm/regions/*/name 2>/dev/null' sh "$k" ||
			echo "# sdsmd.$k is still there"
	done
}

# What a run costs, counted by the module on every node
# (Documentation/performance.rst, "What a fault costs").
AB_COSTS="cost_msgs cost_local_msgs cost_allocs cost_copies cost_wakeups
own_grants trains train_msgs"

# ab_costs: each of AB_COSTS summed over the nodes, "NAME=V ..."; V is -
# if a node lacks the counter (an older module).
ab_costs() {
	local k c v kv
	local -A sum=()
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		# shellcheck disable=SC2016,SC2086 # the node's shell; a list
		for kv in $(on_node "$k" sh -c 'for f; do
				v=$(cat "/sys/kernel/sdsm/stats/$f" 2>/dev/null) || v=-
				echo "$f=${v:--}"; done' sh $AB_COSTS); do
			c=${kv%%=*}
			v=${kv#*=}
			case "$v/${sum[$c]:-0}" in
			*[!0-9/]*) sum[$c]=- ;;
			*) sum[$c]=$(( ${sum[$c]:-0} + v )) ;;
			esac
		done
	done
	for c in $AB_COSTS; do
		printf '%s=%s ' "$c" "${sum[$c]:--}"
	done
}

# ab_costs_delta BEFORE AFTER: AFTER - BEFORE per counter, "NAME=V ...".
ab_costs_delta() {
	local kv c v
	local -A b=()
	for kv in $1; do
		b[${kv%%=*}]=${kv#*=}
	done
	for kv in $2; do
		c=${kv%%=*}
		v=${kv#*=}
		case "$v/${b[$c]:--}" in
		*[!0-9/]*) printf '%s=- ' "$c" ;;
		*) printf '%s=%s ' "$c" $((v - b[$c])) ;;
		esac
	done
}

# ab_module TREE: TREE's module loaded on every node, each seeing the
# others up; the module in use is unloaded first.
ab_module() {
	local k j
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		on_node "$k" sdsm_unload > /dev/null 2>&1
	done
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		# shellcheck disable=SC2016 # expanded by the node's shell
		on_node "$k" bash -c '. "$VCLUSTER_LIB" && SDSM_KO=$1 sdsm_load' \
			sh "$1/kmod/sdsm.ko" ||
			{ echo "# node $k: cannot load $1/kmod/sdsm.ko"; return 1; }
	done
	for k in $(seq 0 $((SDSM_NR_NODES - 1))); do
		for j in $(seq 0 $((SDSM_NR_NODES - 1))); do
			[ "$j" = "$k" ] && continue
			on_node "$k" "$SDSM_ROOT/tools/bench/guest.sh" wait-up "$j" 90 ||
				{ echo "# node $k does not see node $j up"; return 1; }
		done
	done
}

# ab_guest ROUNDS TIMEOUT MODULES TREE_A TREE_B NJOBS JOB... WITH...: print one
# line "ab round=R side=S job=J with=W seconds=X checksum=C status=N" per
# run (side native, A or B; J and W are indexes into the lists, which are
# printed first as "ab job=J ..." and "ab with=W ..."), and after each
# run under sdsm "ab costs round=R side=S job=J with=W NAME=V..." (what
# it cost on all nodes, see ab_costs, and command_ms: the whole sdsmctl
# command's wall time, its launch, checksum and exit included, where
# seconds= is the program's timed part).  MODULES 1: each
# side's runs on its tree's module (the native runs use none).
ab_guest() {
	local rounds=$1 to=$2 modules=$3 njobs=$6 r j w s side tree out st sc
	local order c0 t0 t1
	local -a trees jobs withs
	trees=([1]=$4 [2]=$5)
	shift 6
	jobs=("${@:1:njobs}")
	shift "$njobs"
	withs=("$@")
	# shellcheck source=tools/vcluster/guest-lib.sh
	. "$VCLUSTER_LIB" || { echo "# VCLUSTER_LIB not set"; return 1; }
	out=$(mktemp -d /tmp/ab.XXXXXX) || return 1
	for j in "${!jobs[@]}"; do
		echo "ab job=$j ${jobs[j]}"
	done
	for w in "${!withs[@]}"; do
		echo "ab with=$w ${withs[w]}"
	done
	for r in $(seq 1 "$rounds"); do
		order="1 2"
		[ $((r % 2)) = 0 ] && order="2 1"
		for j in "${!jobs[@]}"; do
			# shellcheck disable=SC2086 # PROG ARGS
			set -- ${jobs[j]}
			timeout "$to" "${trees[2]}/tools/bench/build/$1" "${@:2}" \
				> "$out/run" 2>&1
			st=$?
			echo "ab round=$r side=native job=$j with=- $(ab_parse "$out/run" |
				sed 's/^\([^ ]*\) \(.*\)$/seconds=\1 checksum=\2/') status=$st"
			for w in "${!withs[@]}"; do
				for s in $order; do
					side=$([ "$s" = 1 ] && echo A || echo B)
					tree=${trees[s]}
					if [ "$modules" = 1 ] && ! ab_module "$tree"; then
						echo "ab round=$r side=$side job=$j with=$w seconds=- checksum=- status=module"
						continue
					fi
					if ! ab_agents_start "$tree"; then
						ab_agents_stop
						echo "ab round=$r side=$side job=$j with=$w seconds=- checksum=- status=agents"
						continue
					fi
					c0=$(ab_costs)
					t0=$(date +%s%N)
					# shellcheck disable=SC2086 # options, PROG ARGS
					timeout "$to" "$tree/tools/sdsmctl/sdsmctl" ${withs[w]} -- \
						"$tree/tools/bench/build/$1" "${@:2}" > "$out/run" 2>&1
					st=$?
					t1=$(date +%s%N)
					sc=$(ab_parse "$out/run")
					echo "ab round=$r side=$side job=$j with=$w seconds=${sc% *} checksum=${sc#* } status=$st"
					echo "ab costs round=$r side=$side job=$j with=$w $(ab_costs_delta "$c0" "$(ab_costs)")command_ms=$(((t1 - t0) / 1000000))"
					[ "$st" = 0 ] || sed 's/^/# /' "$out/run" | tail -n 5
					ab_agents_stop
				done
			done
		done
	done
	rm -rf "$out"
}

if [ "${1:-}" = guest ]; then
	shift
	ab_guest "$@"
	exit
fi

# ---- the table ------------------------------------------------------

# ab_table CMD_OUT: the table of a run's output on stdout; exit 1 if a
# run failed or its checksum differs from that round's native run.
ab_table() {
	awk '
	function median(list,   n, a, i, t, j) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		if (n == 0)
			return ""
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function fmt(x) {
		return x == "-" ? x : sprintf("%.2f", x)
	}
	/^ab costs / {
		for (f = 3; f <= NF; f++) {
			split($f, kv, "=")
			c[kv[1]] = kv[2]
			if (!(kv[1] in cidx)) {
				cidx[kv[1]] = ++nc
				cname[nc] = kv[1]
			}
		}
		k = c["job"] SUBSEP c["with"] SUBSEP c["side"]
		for (i = 1; i <= nc; i++) {
			n = cname[i]
			if (n == "round" || n == "side" || n == "job" || n == "with")
				continue
			if (c[n] == "-" || c[n] == "")
				dash[k, n] = 1
			else
				cv[k, n] = cv[k, n] " " c[n]
		}
		ncost++
		next
	}
	/^ab job=/ { sub(/^ab job=/, ""); i = $1; sub(/^[^ ]* /, ""); job[i] = $0; nj++; next }
	/^ab with=/ { sub(/^ab with=/, ""); i = $1; sub(/^[^ ]* /, ""); with[i] = $0; nw++; next }
	/^ab round=/ {
		for (f = 2; f <= NF; f++) {
			split($f, kv, "=")
			v[kv[1]] = kv[2]
		}
		k = v["job"] SUBSEP v["with"]
		if (v["side"] == "native") {
			ref[v["round"], v["job"]] = v["checksum"]
			nat[v["job"]] = nat[v["job"]] " " fmt(v["seconds"])
			if (v["status"] != 0 || v["checksum"] == "-") {
				printf "native run of job %d failed in round %d (status %s)\n", v["job"], v["round"], v["status"]
				bad = 1
			}
			next
		}
		ok = v["status"] == 0 && v["checksum"] != "-" &&
		     v["checksum"] == ref[v["round"], v["job"]]
		if (!ok) {
			printf "%s round %d, job %s, with %s: status %s, checksum %s (native %s)\n", v["side"], v["round"], job[v["job"]], with[v["with"]], v["status"], v["checksum"], ref[v["round"], v["job"]]
			bad = 1
		}
		t[k, v["side"]] = t[k, v["side"]] (ok ? " " fmt(v["seconds"]) : " failed")
		if (ok)
			m[k, v["side"]] = m[k, v["side"]] " " v["seconds"]
		runs++
	}
	END {
		if (!runs) {
			print "no runs"
			exit 1
		}
		printf "%-24s %-32s %-16s %-16s %s\n", "job", "with", "A seconds", "B seconds", "B/A"
		for (j = 0; j < nj; j++) {
			printf "%-24s %-32s %-16s %s\n", job[j], "(native)", "", substr(nat[j], 2)
			for (w = 0; w < nw; w++) {
				k = j SUBSEP w
				a = median(m[k, "A"]); b = median(m[k, "B"])
				printf "%-24s %-32s %-16s %-16s %s\n", job[j], with[w], substr(t[k, "A"], 2), substr(t[k, "B"], 2), (a != "" && b != "" && a > 0) ? sprintf("%.2f", b / a) : "n/a"
			}
		}
		if (ncost) {
			printf "\nwhat a run cost, summed over the nodes (median of the rounds; - : a module without the counter)\n"
			printf "%-24s %-32s %-4s", "job", "with", "side"
			for (i = 1; i <= nc; i++)
				if (cname[i] !~ /^(round|side|job|with)$/)
					printf " %s", cname[i]
			printf "\n"
			for (j = 0; j < nj; j++)
				for (w = 0; w < nw; w++)
					for (sd = 0; sd < 2; sd++) {
						side = sd ? "B" : "A"
						k = j SUBSEP w SUBSEP side
						printf "%-24s %-32s %-4s", job[j], with[w], side
						for (i = 1; i <= nc; i++) {
							n = cname[i]
							if (n ~ /^(round|side|job|with)$/)
								continue
							med = (k, n) in dash ? "-" : median(cv[k, n])
							printf " %" length(n) "s", med == "" ? "-" : med
						}
						printf "\n"
					}
		}
		exit bad
	}' "$1"
}

# ---- on the host ----------------------------------------------------

NODES=3
ROUNDS=2
TIMEOUT=600
MODULES=0
OUT=
REPORT=
JOBS=()
WITHS=()
REVS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--nodes|--rounds|--timeout|--out|--with|--job|--report)
		[ $# -ge 2 ] || { msg "$1 needs a value"; usage; } ;;
	esac
	case "$1" in
	--nodes) NODES=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--out) OUT=$2; shift ;;
	--with) WITHS+=("$2"); shift ;;
	--job) JOBS+=("$2"); shift ;;
	--report) REPORT=$2; shift ;;
	--modules) MODULES=1 ;;
	-h|--help) usage ;;
	-*) msg "unknown option $1"; usage ;;
	*) REVS+=("$1") ;;
	esac
	shift
done

if [ -n "$REPORT" ]; then
	[ -f "$REPORT/vcluster/node0/cmd.out" ] ||
		{ msg "$REPORT/vcluster/node0/cmd.out: no such file"; exit 2; }
	grep '^ab ' "$REPORT/vcluster/node0/cmd.out" > "$REPORT/runs.txt"
	ab_table "$REPORT/runs.txt" | tee "$REPORT/table.txt"
	exit "${PIPESTATUS[0]}"
fi

case "$NODES$ROUNDS$TIMEOUT" in
*[!0-9]*) msg "--nodes, --rounds and --timeout take numbers"; exit 2 ;;
esac
if [ "$NODES" -lt 2 ] || [ "$NODES" -gt 8 ] || [ "$ROUNDS" -lt 1 ] ||
   [ "$TIMEOUT" -lt 1 ]; then
	msg "need 2 <= --nodes <= 8, --rounds >= 1, --timeout >= 1"
	exit 2
fi
[ ${#JOBS[@]} -gt 0 ] || { msg "no --job"; usage; }
for j in "${JOBS[@]}"; do
	case ${j%% *} in
	'' | *[!A-Za-z0-9_.-]*) msg "--job '$j': PROG is a program of tools/bench/build"; exit 2 ;;
	esac
done
[ ${#WITHS[@]} -gt 0 ] || WITHS=("-N 0" "-N 0,1")
case ${#REVS[@]} in
1) REVS+=(.) ;;
2) ;;
*) msg "need a revision A, and optionally B"; usage ;;
esac

# ab_tree REV: a built tree of REV (the working tree for "."), on stdout.
ab_tree() {
	local sha dir
	if [ "$1" = . ]; then
		dir=$ROOT
	else
		sha=$(git -C "$ROOT" rev-parse --verify -q "$1^{commit}") ||
			{ msg "$1: not a revision of $ROOT"; return 1; }
		dir=$ROOT/.cache/ab/$sha
		if [ ! -d "$dir" ]; then
			mkdir -p "$ROOT/.cache/ab" &&
				git -C "$ROOT" worktree add -q --detach "$dir" "$sha" >&2 ||
				{ msg "cannot check out $1 in $dir"; return 1; }
		fi
	fi
	if ! make -s -C "$dir" userspace >&2 || ! make -s -C "$dir/tools/bench" all >&2; then
		msg "cannot build the user space of $1 in $dir"
		return 1
	fi
	if [ "$MODULES" = 1 ] && ! make -s -C "$dir" module >&2; then
		msg "cannot build the module of $1 in $dir"
		return 1
	fi
	echo "$dir"
}

A=$(ab_tree "${REVS[0]}") || exit 1
B=$(ab_tree "${REVS[1]}") || exit 1
for j in "${JOBS[@]}"; do
	for t in "$A" "$B"; do
		[ -x "$t/tools/bench/build/${j%% *}" ] ||
			{ msg "--job '$j': no ${j%% *} in $t/tools/bench/build"; exit 2; }
	done
done
make -s -C "$ROOT" module >&2 || { msg "cannot build the module of $ROOT"; exit 1; }

OUT=${OUT:-$ROOT/out/ab/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
{
	echo "A=${REVS[0]} $(git -C "$A" describe --always --dirty 2>/dev/null) $A"
	echo "B=${REVS[1]} $(git -C "$B" describe --always --dirty 2>/dev/null) $B"
	if [ "$MODULES" = 1 ]; then
		echo "module=each side's own"
	else
		echo "module=$(git -C "$ROOT" describe --always --dirty 2>/dev/null)"
	fi
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) nodes=$NODES rounds=$ROUNDS"
} > "$OUT/host.txt"
cat "$OUT/host.txt" >&2
runs=$(( ${#JOBS[@]} * (1 + 2 * ${#WITHS[@]}) * ROUNDS ))
msg "$runs runs of up to ${TIMEOUT}s each; output in $OUT"
cd "$ROOT" || exit 1
"$ROOT/tools/vcluster/vcluster" run -n "$NODES" --on 0 --mem 1024 \
	--timeout $(( runs * (TIMEOUT + 90 + 120 * MODULES) + 60 )) --out "$OUT/vcluster" -- \
	tools/bench/ab.sh guest "$ROUNDS" "$TIMEOUT" "$MODULES" "$A" "$B" "${#JOBS[@]}" \
	"${JOBS[@]}" "${WITHS[@]}" > "$OUT/vcluster.txt" 2>&1
rc=$?
grep '^ab ' "$OUT/vcluster/node0/cmd.out" > "$OUT/runs.txt" 2> /dev/null
ab_table "$OUT/runs.txt" | tee "$OUT/table.txt"
st=${PIPESTATUS[0]}
[ $rc = 0 ] || { msg "vcluster exited $rc (see $OUT/vcluster.txt)"; exit $rc; }
exit "$st"
