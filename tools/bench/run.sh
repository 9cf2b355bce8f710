#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - `make bench`: boot a vcluster, measure sdsm against the raw RDMA
# link in the same run, and write a report.  See
# Documentation/performance.rst.
#
#   tools/bench/run.sh [--reps N] [--nodes N] [--long] [--profile]
#                      [--out DIR] [--timeout SEC] [--only PARTS]
#   tools/bench/run.sh --report DIR      (redo the report of an earlier run)
#
# Environment (for `make bench`): BENCH_REPS, BENCH_NODES, BENCH_LONG=1,
# BENCH_PROFILE=1, BENCH_TIMEOUT, BENCH_ONLY.  PARTS: comma-separated
# perftest, fio_tmpfs, read_fault, read_fault_scale, read_fault_nodes,
# write_fault, pingpong, fio_sdsm, matmul, shim, false_sharing, jacobi.
#
# Output: out/bench/<stamp>/{table.txt,results.json,fault-latency.png};
# the raw samples are in <dir>/vcluster/node0/out/.  Exit status: 0 when
# the report was written and the cluster behaved (goals missed or not),
# vcluster's status when it did not, 1 when no report could be made.

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

REPS=${BENCH_REPS:-5}
NODES=${BENCH_NODES:-3}
LONG=${BENCH_LONG:-0}
PROFILE=${BENCH_PROFILE:-0}
ONLY=${BENCH_ONLY:-}
TIMEOUT=${BENCH_TIMEOUT:-}
OUT=
REPORT_ONLY=

usage() {
	sed -n '7,15p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) REPS=$2; shift ;;
	--nodes) NODES=$2; shift ;;
	--long) LONG=1 ;;
	--profile) PROFILE=1 ;;
	--out) OUT=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--report) REPORT_ONLY=$2; shift ;;
	-h|--help) usage ;;
	*) echo "bench: unknown option $1" >&2; usage ;;
	esac
	shift
done

msg() {
	echo "bench: $*" >&2
}

report() {
	_rc=$1
	python3 "$HERE/report.py" "$OUT/vcluster/node0/out" "$OUT" \
		--vcluster-rc "$_rc" --host-info "$OUT/host.txt" ||
		{ msg "no report could be made"; exit 1; }
	msg "results in $OUT (table.txt, results.json, fault-latency.png)"
}

if [ -n "$REPORT_ONLY" ]; then
	OUT=$REPORT_ONLY
	report "$(cat "$OUT/vcluster.rc" 2>/dev/null || echo 0)"
	exit 0
fi

case "$REPS$NODES" in
*[!0-9]*) msg "--reps and --nodes take numbers"; exit 2 ;;
esac
if [ "$REPS" -lt 1 ] || [ "$NODES" -lt 2 ] || [ "$NODES" -gt 8 ]; then
	msg "need --reps >= 1 and 2 <= --nodes <= 8"
	exit 2
fi

# Sizes: small by default (TCG guests on 2 host cores), 4x with --long.
ARGS="--reps $REPS"
if [ "$LONG" = 1 ]; then
	ARGS="$ARGS --lat-iters 2000 --bw-iters 2000 --fault-pages 512"
	ARGS="$ARGS --wf-pages 256 --fio-pages 1024 --pp-rounds 200 --mm-n 512"
	ARGS="$ARGS --shim-mm-n 1024 --shim-heat 2048x512x120 --shim-bound 1800"
	ARGS="$ARGS --fs 4x100x80 --jacobi 1024x100"
	: "${TIMEOUT:=$((1200 + 1200 * REPS / 5 * 4 + 1500 * REPS))}"
else
	ARGS="$ARGS --lat-iters 500 --bw-iters 500 --fault-pages 128"
	ARGS="$ARGS --wf-pages 64 --fio-pages 256 --pp-rounds 50 --mm-n 256"
	ARGS="$ARGS --shim-mm-n 512 --shim-heat 1024x512x60 --shim-bound 600"
	ARGS="$ARGS --fs 4x100x20 --jacobi 512x100"
	: "${TIMEOUT:=$((900 + 600 * REPS))}"
fi
[ "$PROFILE" = 1 ] && ARGS="$ARGS --profile"
case "$ONLY" in
*[!a-z_,]*) msg "--only takes comma-separated part names"; exit 2 ;;
?*) ARGS="$ARGS --only $ONLY" ;;
esac

make -s -C "$HERE" all || { msg "cannot build tools/bench"; exit 1; }
[ -f "$ROOT/kmod/sdsm.ko" ] ||
	msg "kmod/sdsm.ko is missing: the sdsm figures will be n/a (run make module)"

OUT=${OUT:-$ROOT/out/bench/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "host_cpus=$(nproc)"
	echo "host_loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "git=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "args=$ARGS"
} > "$OUT/host.txt"

msg "$NODES TCG guests, $REPS repetitions, guest part bounded by ${TIMEOUT}s; output in $OUT"
cd "$ROOT" || exit 1
# Booting is not measured; other clusters may be loading the host cores.
export VCLUSTER_BOOT_TIMEOUT=${VCLUSTER_BOOT_TIMEOUT:-$((300 + 150 * NODES))}
# shellcheck disable=SC2086
"$ROOT/tools/vcluster/vcluster" run -n "$NODES" --on 0 --no-module \
	--timeout "$TIMEOUT" --out "$OUT/vcluster" -- \
	tools/bench/guest.sh $ARGS > "$OUT/guest-output.txt"
rc=$?
echo "$rc" > "$OUT/vcluster.rc"
echo "host_loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/host.txt"
[ $rc = 0 ] || msg "vcluster exited $rc (see $OUT/vcluster and $OUT/guest-output.txt)"
if [ ! -f "$OUT/vcluster/node0/out/meta.txt" ]; then
	msg "the guest part did not run; no figures"
	exit $(( rc ? rc : 1 ))
fi
report "$rc"
exit "$rc"
