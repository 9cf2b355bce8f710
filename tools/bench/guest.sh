#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh - the in-guest half of `make bench`.  tools/bench/run.sh starts
# it on node 0 of a vcluster (`vcluster run --on 0 --no-module`); it drives
# the other nodes with on_node and writes every raw sample into $SDSM_OUT,
# which run.sh hands to report.py.  Nothing here computes a figure.
#
#   guest.sh [--reps N] [--lat-iters N] [--bw-iters N] [--bw-outs N]
#            [--fault-pages N]
#            [--big-pages N] [--wf-pages N] [--fio-pages N]
#            [--fio-local-pages N] [--pp-rounds N] [--mm-n N]
#            [--shim-mm-n N] [--shim-heat ROWSxCOLSxSTEPS] [--shim-bound SEC]
#            [--fs PAGESxKxPHASES] [--jacobi NxITERS]
#            [--profile] [--only PART,...]
#   guest.sh trace-on | trace-dump     (run on a node via on_node)
#   guest.sh costs                     (the same: this node's cost counters)
#   guest.sh wait-up K SEC             (the same: until this node sees
#                                      node K up, at most SEC seconds)
#   guest.sh stats                     (the same: every counter of stats/
#                                      and every peer's tx_msgs, tx_bytes)
#
# Files written (r = repetition 1..N):
#   meta.txt                     key=value: parameters, kernel, features
#   status.FIG                   "ok", "n/a (reason)" or "failed: reason"
#   ib_read_lat.r.txt            perftest client output (-U: every sample)
#   ib_read_bw.r.txt             perftest client output
#   ib_read_{lat,bw}_ev.r.txt    the same with -e (sleep on CQ events)
#   ib_read_bw_o{,_ev}.r.txt     ib_read_bw -o --bw-outs (outstanding
#                                reads), without and with -e
#   ib_send_lat_{64,4k}{,_ev}.r.txt  ib_send_lat -U of 64 and 4096 bytes
#                                (one send each way a sample), without
#                                and with -e: a request and a reply
#   fio_tmpfs_{seq,rand}.r.json  fio on tmpfs (--fio-local-pages pages)
#   read_fault.r.txt             "page t0_ns t1_ns" per first-touch fault
#   read_fault_costs.r.txt       "before|after NODE COUNTER VALUE" around
#                                those faults, every node; VALUE "missing"
#                                when the sysfs file is not there
#   read_fault_{1m,1g}.r.txt     the same, --fault-pages pages spread
#                                evenly over a 1 MiB and a 1 GiB region
#                                (--big-pages; 262144)
#   read_fault_{3n,2n}.r.txt     the same, read_fault's pages, with all the
#                                nodes in the cluster and with nodes 0
#                                and 1 alone (the module reloaded)
#   write_fault_{1,2}.r.txt      the same, for writes with 1 or 2 sharers
#   pingpong.r.txt               "round t0_ns t1_ns" per round trip
#   fio_sdsm_{remote,local}_{seq,rand}.r.json  (--fio-pages remote,
#                                --fio-local-pages local)
#   matmul_{1,2}.r.txt           seconds=, checksum=, verified=
#   shim_{matmul,heat}_serial.txt    the program's --serial run (reference)
#   shim_{matmul,heat}_CFG.r.txt     CFG native (no shim, node 0) or n1, n2,
#                                n3 (sdsmctl -N 0 / 0,1 / 0,1,2): the
#                                program's seconds=, checksum=, threads=
#                                plus wall_seconds= (the whole command)
#                                and exit=
#   shim_{matmul,heat}_CFG.r.err     its standard error (the workers' too)
#   shim_{matmul,heat}_CFG.stats.txt "before|after NODE COUNTER VALUE"
#                                around the job of repetition 1, every node
#   false_sharing_{seq,release}.r.txt  sdsm_rcbench fs-work of node 0 on a
#                                sequential and a release region, every
#                                node a worker: seconds=, checksum=,
#                                verified=, consistency=
#   jacobi_{1,2}.r.txt           sdsm_rcbench jacobi-work of node 0, on 1
#                                and on 2 nodes: the same keys
#   false_sharing_{seq,release}.stats.txt, jacobi_{1,2}.stats.txt
#                                as the shim's, around the run of
#                                repetition 1
#   profile/                     --profile: traces and the traced faults
#   log.txt                      what ran, with times

set -u

T=${BENCH_TRACEFS:-/sys/kernel/tracing}
S=${BENCH_SYSFS:-/sys/kernel/sdsm}
# Documentation/performance.rst, "What a fault costs".
COSTS="stats/cost_wakeups stats/cost_copies stats/cost_allocs stats/cost_msgs
stats/cost_local_msgs stats/spare_refills stats/spare_chunks
stats/read_faults_remote metadata_bytes_per_page"

case "${1:-}" in
trace-on)
	echo 0 > "$T/tracing_on"
	echo > "$T/trace"
	echo mono > "$T/trace_clock" || exit 1
	echo 8192 > "$T/buffer_size_kb"
	echo 1 > "$T/events/sdsm/enable" || exit 1
	echo 1 > "$T/tracing_on"
	exit 0 ;;
trace-dump)
	echo 0 > "$T/tracing_on"
	cat "$T/trace"
	echo 0 > "$T/events/sdsm/enable"
	echo > "$T/trace"
	exit 0 ;;
wait-up)
	i=0
	while [ "$(cat "$S/nodes/$2/state" 2>/dev/null)" != up ]; do
		i=$((i + 1))
		[ $i -le $(($3 * 10)) ] || exit 1
		sleep 0.1
	done
	exit 0 ;;
costs)
	for c in $COSTS; do
		v=$(cat "$S/$c" 2> /dev/null) || v=missing
		echo "${c#stats/} ${v:-missing}"
	done
	exit 0 ;;
stats)
	for f in "$S"/stats/* "$S"/nodes/*/tx_msgs "$S"/nodes/*/tx_bytes; do
		[ -f "$f" ] || continue
		case $f in
		*/fault_latency_hist) continue ;;
		*/nodes/*) c=${f#"$S"/nodes/}; c=${c#*/}.${c%%/*} ;;
		*) c=${f##*/} ;;
		esac
		v=$(cat "$f" 2> /dev/null) || continue
		case $v in
		''|*[!0-9]*) continue ;;
		esac
		echo "$c $v"
	done
	exit 0 ;;
esac

REPS=5
LAT_ITERS=500
BW_ITERS=500
# Outstanding reads of the ib_read_bw_o baselines: perftest's default (as
# many as the device allows, 128 on rxe) collapses soft-RoCE under TCG.
BW_OUTS=16
FAULT_PAGES=128
BIG_PAGES=262144
WF_PAGES=64
FIO_PAGES=256
# The local jobs read fast enough that fio's millisecond clock must see
# at least some 100 ms of them: 64 MiB.
FIO_LOCAL_PAGES=16384
PP_ROUNDS=50
MM_N=256
SHIM_MM_N=512
SHIM_HEAT=1024x512x60
SHIM_BOUND=900
FS=4x100x20
JACOBI=512x100
PROFILE=0
ONLY=

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) REPS=$2; shift ;;
	--lat-iters) LAT_ITERS=$2; shift ;;
	--bw-iters) BW_ITERS=$2; shift ;;
	--bw-outs) BW_OUTS=$2; shift ;;
	--fault-pages) FAULT_PAGES=$2; shift ;;
	--big-pages) BIG_PAGES=$2; shift ;;
	--wf-pages) WF_PAGES=$2; shift ;;
	--fio-pages) FIO_PAGES=$2; shift ;;
	--fio-local-pages) FIO_LOCAL_PAGES=$2; shift ;;
	--pp-rounds) PP_ROUNDS=$2; shift ;;
	--mm-n) MM_N=$2; shift ;;
	--shim-mm-n) SHIM_MM_N=$2; shift ;;
	--shim-heat)
		SHIM_HEAT=$2
		shift
		echo "$SHIM_HEAT" | grep -Eqx '[0-9]+x[0-9]+x[0-9]+' || {
			echo "guest.sh: --shim-heat takes ROWSxCOLSxSTEPS" >&2
			exit 2
		} ;;
	--shim-bound) SHIM_BOUND=$2; shift ;;
	--fs)
		FS=$2
		shift
		echo "$FS" | grep -Eqx '[0-9]+x[0-9]+x[0-9]+' || {
			echo "guest.sh: --fs takes PAGESxKxPHASES" >&2
			exit 2
		} ;;
	--jacobi)
		JACOBI=$2
		shift
		echo "$JACOBI" | grep -Eqx '[0-9]+x[0-9]+' || {
			echo "guest.sh: --jacobi takes NxITERS" >&2
			exit 2
		} ;;
	--profile) PROFILE=1 ;;
	--only) ONLY=$2; shift ;;
	*) echo "guest.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

# Steps on other nodes (perftest servers, sharers, matmul workers) carry
# their own bounds; on_node's must not cut them short.
export ON_NODE_TIMEOUT=900
# shellcheck source=/dev/null
. "$VCLUSTER_LIB"

BIN=${BENCH_BIN:-$SDSM_ROOT/tools/bench/build}
B=$SDSM_OUT
NR=$SDSM_NR_NODES
SH=$SDSM_SHARED/bench
PEER=198.18.0.2
mkdir -p "$SH" "$B"
ERR=$(mktemp /tmp/bench-err.XXXXXX)
trap 'rm -f "$ERR"' EXIT

log() {
	echo "bench: $*" >&2
	echo "$(date +%T) $*" >> "$B/log.txt"
}

status() {
	_fig=$1
	shift
	echo "$*" > "$B/status.$_fig"
	log "$_fig: $*"
}

# step FIG WHAT CMD...: run CMD (stderr kept); on failure set FIG's status
# to "failed: WHAT: <CMD's last error line>" and return 1.
step() {
	_fig=$1
	_what=$2
	shift 2
	"$@" 2> "$ERR"
	_rc=$?
	cat "$ERR" >> "$B/log.txt"
	[ $_rc = 0 ] && return 0
	status "$_fig" "failed: $_what: $(grep -v '^$' "$ERR" | tail -n 1)" \
		"(exit $_rc)"
	return 1
}

# ---- the module ---------------------------------------------------------

MODULE_OK=1
for k in $(seq 0 $((NR - 1))); do
	if ! on_node "$k" sdsm_load >> "$B/log.txt" 2>&1; then
		MODULE_OK=0
		log "sdsm.ko did not load on node $k"
	fi
done
FEATURES=none
PREFETCH_PARAM=/sys/module/sdsm/parameters/prefetch_pages
PREFETCH_LOADED=$(cat $PREFETCH_PARAM 2>/dev/null || echo 0)
if [ $MODULE_OK = 1 ]; then
	"$BIN/sdsm_bench" info > "$B/sdsm_info.txt" 2>> "$B/log.txt"
	FEATURES=$(sed -n 's/^feature_names=//p' "$B/sdsm_info.txt")
fi
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel=$(uname -r)"
	echo "nodes=$NR"
	echo "reps=$REPS"
	echo "lat_iters=$LAT_ITERS"
	echo "bw_iters=$BW_ITERS"
	echo "bw_outs=$BW_OUTS"
	echo "fault_pages=$FAULT_PAGES"
	echo "big_pages=$BIG_PAGES"
	echo "wf_pages=$WF_PAGES"
	echo "fio_pages=$FIO_PAGES"
	echo "fio_local_pages=$FIO_LOCAL_PAGES"
	echo "pp_rounds=$PP_ROUNDS"
	echo "mm_n=$MM_N"
	echo "shim_mm_n=$SHIM_MM_N"
	echo "shim_heat=$SHIM_HEAT"
	echo "fs=$FS"
	echo "jacobi=$JACOBI"
	echo "profile=$PROFILE"
	echo "only=$ONLY"
	echo "module_loaded=$MODULE_OK"
	echo "features=$FEATURES"
	echo "prefetch_pages=$PREFETCH_LOADED (0 for read_fault, write_fault, pingpong)"
	echo "guest_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "rxe_mtu=$(ibv_devinfo -d rxe0 2>/dev/null | sed -n 's/.*active_mtu:[[:space:]]*//p' | head -n 1)"
} > "$B/meta.txt"

# sdsm_gate FIG FEATURE...: whether the module can run FIG; if not, say why.
sdsm_gate() {
	_fig=$1
	shift
	if [ $MODULE_OK = 0 ]; then
		status "$_fig" "n/a (sdsm.ko did not load)"
		return 1
	fi
	_miss=$("$BIN/sdsm_bench" need "$@" 2>&1)
	case $? in
	0) return 0 ;;
	3) status "$_fig" "n/a (module lacks $_miss)" ;;
	*) status "$_fig" "failed: $_miss" ;;
	esac
	return 1
}

# ---- baselines: perftest over rdma_cm between node 0 and node 1 ----------

PORT=18600
PT_TOOL=
PT_CMD=()	# the tool and its connection options, server's and client's
PT_OUT=
PT_BOUND=

pt_client() {
	# shellcheck disable=SC2086
	vc_bounded "$PT_BOUND" "${PT_CMD[@]}" $PT_ARGS "$PEER" > "$PT_OUT" 2>&1
}

# perftest_pair FIG TOOL OUT ITERS ARGS: server on node 1, client here,
# ITERS reads of 4 KiB.  A pair that has not finished in 30 s plus 50 ms a
# read (0.08 MB/s, the slowest ib_read_bw that ever completed here) is
# hung, not slow: perftest over soft-RoCE under TCG sometimes never ends
# (a repetition otherwise takes 3 to 10 s).  Its server is killed then,
# so that the retry need not wait out the server's bound too.
perftest_pair() {
	_fig=$1
	PT_TOOL=$2
	PT_OUT=$3
	PT_BOUND=$((30 + $4 / 20))
	PT_ARGS=$5
	PORT=$((PORT + 1))
	PT_CMD=("$PT_TOOL" -d rxe0 -R -F -p "$PORT")
	# shellcheck disable=SC2086
	on_node 1 vc_bounded $((PT_BOUND + 30)) "${PT_CMD[@]}" $PT_ARGS \
		> "$PT_OUT.server" 2>&1 &
	_spid=$!
	sleep 1
	wait_until "$PT_BOUND" pt_client
	_rc=$?
	[ $_rc = 0 ] ||
		on_node 1 pkill -KILL -f -- "^${PT_CMD[*]} " > /dev/null 2>&1
	wait $_spid
	if [ $_rc != 0 ]; then
		log "$_fig: $PT_TOOL failed: $(grep -v -e '^-*$' -e '^ *$' \
			"$PT_OUT" | tail -n 1)"
		return 1
	fi
	return 0
}

# perftest_mode NAME TOOL ITERS ARGS: REPS repetitions of TOOL ARGS
# (perftest_pair), each into $B/NAME.r.txt and tried once more if it
# fails (under load a server may start too late); status NAME is ok,
# n/a with one node, or failed with the last line the failing
# repetition printed, after which its later repetitions are not run.
perftest_mode() {
	if [ "$NR" -lt 2 ]; then
		status "$1" "n/a (needs 2 nodes)"
		return
	fi
	for r in $(seq 1 "$REPS"); do
		log "$1 rep $r"
		perftest_pair "$1" "$2" "$B/$1.$r.txt" "$3" "$4" ||
		perftest_pair "$1" "$2" "$B/$1.$r.txt" "$3" "$4" || {
			status "$1" "failed: rep $r: $(grep -v \
				-e '^-*$' -e '^ *$' "$B/$1.$r.txt" | tail -n 1)"
			return
		}
	done
	status "$1" ok
}

# Each tool runs twice per repetition: polling the CQ (perftest's default)
# and sleeping on CQ events (-e).  On a 1-vCPU TCG guest a busy poller
# delays soft-RoCE's own kernel work, so either mode can be the faster;
# report.py takes the faster as the baseline.
baseline_perftest() {
	for t in ib_read_lat ib_read_lat_ev ib_read_bw ib_read_bw_ev \
		ib_read_bw_o ib_read_bw_o_ev; do
		_tool=${t%_ev}
		_ev=
		[ "$t" = "$_tool" ] || _ev=-e
		_o=
		case $_tool in
		*_o) _tool=${_tool%_o}; _o="-o $BW_OUTS" ;;
		esac
		_it=$LAT_ITERS
		_u=-U
		if [ "$_tool" = ib_read_bw ]; then
			_it=$BW_ITERS
			_u=
		fi
		perftest_mode $t $_tool "$_it" "-s 4096 -n $_it $_u $_o $_ev"
	done
	baseline_send_pair
}

# A request of 64 bytes and a reply of 4 KiB, as a fault's READ and
# GRANT_READ are, with nothing in between: ib_send_lat of each size (half
# a ping-pong of two sends, one send's latency), polling and with -e.
# report.py adds the two medians of a repetition: the least any protocol
# of two sends can take on this link, against ib_read_lat's one READ.
baseline_send_pair() {
	for t in ib_send_lat_64 ib_send_lat_64_ev ib_send_lat_4k \
		ib_send_lat_4k_ev; do
		_ev=
		case $t in *_ev) _ev=-e ;; esac
		_sz=64
		case $t in *_4k*) _sz=4096 ;; esac
		perftest_mode $t ib_send_lat "$LAT_ITERS" \
			"-s $_sz -n $LAT_ITERS -U $_ev"
	done
}

# fio_job NAME FILE SIZE RW OUT: one pass of 4 KiB mmap reads over
# [0, SIZE) of FILE, each page once.  (For a character device fio takes
# --size as the end of the file, hence --filesize too.)
fio_job() {
	vc_bounded 300 fio --name="$1" --filename="$2" --offset=0 \
		--size="$3" --filesize="$3" --bs=4k --rw="$4" --ioengine=mmap \
		--invalidate=0 --fadvise_hint=0 --randrepeat=1 \
		--output-format=json --output="$5"
}

# fio_sdsm_job NAME MMAP_OFFSET SIZE RW OUT: fio_job on a region of
# /dev/sdsm; fio_offset.so moves fio's mappings to the region's offset,
# which fio's own --offset does not do for the mmap engine.
fio_sdsm_job() {
	LD_PRELOAD="$BIN/fio_offset.so${LD_PRELOAD:+ $LD_PRELOAD}" \
		SDSM_BENCH_MMAP_BASE="$2" fio_job "$1" /dev/sdsm "$3" "$4" "$5"
}

baseline_fio() {
	_f=/tmp/bench-fio.dat
	for mode in seq rand; do
		_rw="read"
		[ $mode = rand ] && _rw=randread
		for r in $(seq 1 "$REPS"); do
			step fio_tmpfs_$mode "fio on tmpfs" fio_job tmpfs-$mode \
				"$_f" $((FIO_LOCAL_PAGES * 4096)) $_rw \
				"$B/fio_tmpfs_$mode.$r.json" || continue 2
		done
		status fio_tmpfs_$mode ok
	done
	rm -f "$_f"
}

# ---- sdsm figures --------------------------------------------------------

sb() {
	"$BIN/sdsm_bench" "$@"
}

destroy() {
	sb destroy "$1" >> "$B/log.txt" 2>&1 || log "could not destroy region $1"
}

# costs_snap PHASE FILE: every node's cost counters, appended to FILE.
costs_snap() {
	for k in $(seq 0 $((NR - 1))); do
		on_node "$k" "$SDSM_ROOT/tools/bench/guest.sh" costs |
			sed "s/^/$1 $k /" >> "$2"
	done
}

# read_fault_rep NAME SEED OUT [COSTS]: pages homed on node 1, written
# there (and unmapped again: clean at the home), then first-touch reads
# here; with COSTS, every node's cost counters just before and after them.
# A failure is figure RF_FIG's (default read_fault).  The region has
# RF_PAGES pages (default FAULT_PAGES), of which every RF_STRIDE-th
# (default 1) is written and read.
read_fault_rep() {
	_rf=${RF_FIG:-read_fault}
	_st=${RF_STRIDE:-1}
	step $_rf "create region" sb create "$1" "${RF_PAGES:-$FAULT_PAGES}" \
		bind:1 > /dev/null || return 1
	step $_rf "home writes the pages" on_node 1 "$BIN/sdsm_bench" \
		touch "$1" write --seed "$2" --stride "$_st" ||
		{ destroy "$1"; return 1; }
	[ -z "${4:-}" ] || { : > "$4"; costs_snap before "$4"; }
	step $_rf "read faults" sb fault "$1" read --home 1 \
		--seed "$2" --stride "$_st" > "$3" || { destroy "$1"; return 1; }
	[ -z "${4:-}" ] || costs_snap after "$4"
	destroy "$1"
}

fig_read_fault() {
	sdsm_gate read_fault COHERENT_MEMORY REGIONS PLACEMENT || return
	for r in $(seq 1 "$REPS"); do
		log "read_fault rep $r"
		read_fault_rep bench-rf-$r $((100 + r)) \
			"$B/read_fault.$r.txt" "$B/read_fault_costs.$r.txt" ||
			return
	done
	status read_fault ok
	[ $PROFILE = 1 ] || return
	mkdir -p "$B/profile"
	log "read_fault profile run"
	if ! on_node 0 "$SDSM_ROOT/tools/bench/guest.sh" trace-on ||
	   ! on_node 1 "$SDSM_ROOT/tools/bench/guest.sh" trace-on; then
		status profile "failed: cannot enable the sdsm tracepoints"
		return
	fi
	read_fault_rep bench-rf-prof 99 "$B/profile/read_fault.txt"
	on_node 0 "$SDSM_ROOT/tools/bench/guest.sh" trace-dump \
		> "$B/profile/trace.node0" 2>&1
	on_node 1 "$SDSM_ROOT/tools/bench/guest.sh" trace-dump \
		> "$B/profile/trace.node1" 2>&1
	status profile ok
}

# fig_read_fault_scale: does a fault cost more in a larger region?  Per
# repetition, FAULT_PAGES read faults as read_fault's, spread evenly (a
# stride) over a 1 MiB region, then over a 1 GiB one, both bound to node 1
# and written there first.  Only the pages measured are touched, so the
# large region costs no more memory than the small one.
fig_read_fault_scale() {
	if ! sdsm_gate read_fault_1g COHERENT_MEMORY REGIONS PLACEMENT; then
		cp "$B/status.read_fault_1g" "$B/status.read_fault_1m"
		return
	fi
	for r in $(seq 1 "$REPS"); do
		for sz in 1m:256 1g:$BIG_PAGES; do
			_f=read_fault_${sz%%:*}
			_n=${sz#*:}
			_k=$((_n / FAULT_PAGES))
			[ "$_k" -ge 1 ] || _k=1
			log "$_f rep $r: $_n pages, every ${_k}th"
			RF_FIG=$_f RF_PAGES=$_n RF_STRIDE=$_k read_fault_rep \
				bench-$_f-$r $((200 + r)) "$B/$_f.$r.txt" || return
		done
	done
	status read_fault_1m ok
	status read_fault_1g ok
}

# cluster_reload FIG N [PARAM=VALUE...]: sdsm unloaded on every node, then
# loaded on nodes 0..N-1 (with PARAMs: nodes= makes a smaller cluster),
# each seeing the others up within 90 s, prefetch off as for every fault
# figure.  A failure is FIG's.
cluster_reload() {
	_cf=$1
	_cn=$2
	shift 2
	for k in $(seq 0 $((NR - 1))); do
		on_node "$k" sdsm_unload >> "$B/log.txt" 2>&1
	done
	for k in $(seq 0 $((_cn - 1))); do
		step "$_cf" "load sdsm on node $k" on_node "$k" sdsm_load "$@" ||
			return 1
	done
	for k in $(seq 0 $((_cn - 1))); do
		for j in $(seq 0 $((_cn - 1))); do
			[ "$j" = "$k" ] && continue
			step "$_cf" "node $k sees node $j up" on_node "$k" \
				"$SDSM_ROOT/tools/bench/guest.sh" wait-up "$j" 90 ||
				return 1
		done
	done
	prefetch_set 0
}

# fig_read_fault_nodes: does a fault cost more in a larger cluster?  Per
# repetition, read_fault's measurement with every node of the cluster in
# it, then with nodes 0 and 1 alone: the module reloaded with nodes= of
# theirs (a cluster of two, not three with one down), then again on all.
fig_read_fault_nodes() {
	if [ "$NR" -lt 3 ]; then
		status read_fault_3n "n/a (needs 3 nodes, cluster has $NR)"
		cp "$B/status.read_fault_3n" "$B/status.read_fault_2n"
		return
	fi
	if ! sdsm_gate read_fault_3n COHERENT_MEMORY REGIONS PLACEMENT; then
		cp "$B/status.read_fault_3n" "$B/status.read_fault_2n"
		return
	fi
	_two=$(echo "${SDSM_NODES:-}" | cut -d, -f1-2)
	for r in $(seq 1 "$REPS"); do
		log "read_fault_3n rep $r: $NR nodes"
		RF_FIG=read_fault_3n read_fault_rep bench-rf3-$r $((300 + r)) \
			"$B/read_fault_3n.$r.txt" || break
		log "read_fault_2n rep $r: nodes 0 and 1 alone"
		if cluster_reload read_fault_2n 2 "nodes=$_two"; then
			RF_FIG=read_fault_2n read_fault_rep bench-rf2-$r \
				$((300 + r)) "$B/read_fault_2n.$r.txt"
		fi
		# Back to every node, whatever happened: the parts after need it.
		cluster_reload read_fault_2n "$NR" || break
		[ -f "$B/status.read_fault_2n" ] && break
	done
	[ -f "$B/status.read_fault_3n" ] || status read_fault_3n ok
	[ -f "$B/status.read_fault_2n" ] || status read_fault_2n ok
}

# fig_write_fault K: pages homed here (node 0), read by nodes 1..K, which
# keep them mapped; then first-touch writes here, each of which must
# invalidate K sharers.  The sharers then check they see the new data.
fig_write_fault() {
	_k=$1
	_fig=write_fault_$_k
	if [ "$NR" -le "$_k" ]; then
		status $_fig "n/a (needs $((_k + 1)) nodes, cluster has $NR)"
		return
	fi
	sdsm_gate $_fig COHERENT_MEMORY REGIONS PLACEMENT || return
	for r in $(seq 1 "$REPS"); do
		log "$_fig rep $r"
		_n=bench-wf$_k-$r
		_rel=$SH/$_n.release
		_seed=$((200 + r))
		step $_fig "create region" sb create $_n "$WF_PAGES" bind:0 \
			> /dev/null || return
		_pids=
		for s in $(seq 1 "$_k"); do
			on_node "$s" "$BIN/sdsm_bench" touch $_n read \
				--ready "$SH/$_n.ready.$s" --hold-until "$_rel" \
				--expect-after $_seed --timeout 240 \
				> "$B/$_fig.sharer$s.$r.log" 2>&1 &
			_pids="$_pids $!"
		done
		_ok=1
		for s in $(seq 1 "$_k"); do
			if ! wait_until 120 test -e "$SH/$_n.ready.$s"; then
				status $_fig "failed: sharer node $s did not read the pages"
				_ok=0
				break
			fi
		done
		if [ $_ok = 1 ]; then
			step $_fig "write faults" sb fault $_n write --home 0 \
				--seed $_seed > "$B/$_fig.$r.txt" || _ok=0
		fi
		: > "$_rel"
		for p in $_pids; do
			if ! wait "$p" && [ $_ok = 1 ]; then
				status $_fig "failed: a sharer saw stale data or failed (see $_fig.sharer*.$r.log)"
				_ok=0
			fi
		done
		destroy $_n
		[ $_ok = 1 ] || return
	done
	status $_fig ok
}

fig_pingpong() {
	sdsm_gate pingpong COHERENT_MEMORY REGIONS PLACEMENT || return
	for r in $(seq 1 "$REPS"); do
		log "pingpong rep $r"
		_n=bench-pp-$r
		step pingpong "create region" sb create $_n 1 bind:0 \
			> /dev/null || return
		on_node 1 "$BIN/sdsm_bench" pingpong $_n 1 "$PP_ROUNDS" \
			--timeout 60 > "$B/pingpong.peer.$r.log" 2>&1 &
		_pid=$!
		step pingpong "ping-pong" sb pingpong $_n 0 "$PP_ROUNDS" \
			--home 0 --timeout 60 > "$B/pingpong.$r.txt"
		_rc=$?
		if ! wait $_pid && [ $_rc = 0 ]; then
			status pingpong "failed: peer: $(tail -n 1 "$B/pingpong.peer.$r.log")"
			_rc=1
		fi
		destroy $_n
		[ $_rc = 0 ] || return
	done
	status pingpong ok
}

# fig_fio_sdsm WHERE MODE: fio on a region homed on node 1 (remote) or 0
# (local); the home touches the pages first (a separate process that then
# exits), and the homes are checked before fio runs.
fig_fio_sdsm() {
	_where=$1
	_mode=$2
	_fig=fio_sdsm_${_where}_$_mode
	_home=1 _pages=$FIO_PAGES
	[ "$_where" = local ] && _home=0 _pages=$FIO_LOCAL_PAGES
	_rw="read"
	[ "$_mode" = rand ] && _rw=randread
	sdsm_gate $_fig COHERENT_MEMORY REGIONS PLACEMENT || return
	for r in $(seq 1 "$REPS"); do
		log "$_fig rep $r"
		_n=bench-f$_where-$_mode-$r
		_info=$(sb create $_n "$_pages" bind:$_home 2> "$ERR") || {
			status $_fig "failed: create region: $(tail -n 1 "$ERR")"
			return
		}
		_off=$(echo "$_info" | sed -n 's/.*offset=\([0-9]*\).*/\1/p')
		_len=$(echo "$_info" | sed -n 's/.*length=\([0-9]*\).*/\1/p')
		_ok=1
		step $_fig "home touches the pages" on_node $_home \
			"$BIN/sdsm_bench" touch $_n write --seed $r &&
		step $_fig "placement check" sb homes $_n $_home &&
		step $_fig "fio on /dev/sdsm" fio_sdsm_job sdsm-$_where-$_mode \
			"$_off" "$_len" $_rw "$B/$_fig.$r.json" || _ok=0
		destroy $_n
		[ $_ok = 1 ] || return
	done
	status $_fig ok
}

fig_matmul() {
	sdsm_gate matmul COHERENT_MEMORY REGIONS PLACEMENT BARRIERS || return
	for r in $(seq 1 "$REPS"); do
		for w in 1 2; do
			log "matmul $w node(s) rep $r"
			_p=bmm$w-$r
			step matmul "setup" "$BIN/sdsm_matmul" setup $_p "$MM_N" $w ||
				return
			_pid=
			if [ $w = 2 ]; then
				on_node 1 "$BIN/sdsm_matmul" work $_p "$MM_N" 2 1 \
					--timeout 300 > "$B/matmul_2.peer.$r.log" 2>&1 &
				_pid=$!
			fi
			step matmul "matmul on $w node(s)" "$BIN/sdsm_matmul" work \
				$_p "$MM_N" $w 0 --verify --timeout 300 \
				> "$B/matmul_$w.$r.txt"
			_rc=$?
			if [ -n "$_pid" ] && ! wait $_pid && [ $_rc = 0 ]; then
				status matmul "failed: worker on node 1: $(tail -n 1 "$B/matmul_2.peer.$r.log")"
				_rc=1
			fi
			for m in a b c; do
				destroy $_p-$m
			done
			[ $_rc = 0 ] || return
		done
	done
	status matmul ok
}

# ---- release consistency (issue 12) ------------------------------------

RCB=$BIN/sdsm_rcbench

# rc_setup FIG CMD...: the setup step of a release-consistency figure; a
# module that refuses SDSM_REGION_F_RELEASE (sdsm_rcbench exits 3) makes
# FIG n/a rather than failed.
rc_setup() {
	_fig=$1
	shift
	"$@" 2> "$ERR"
	_rc=$?
	cat "$ERR" >> "$B/log.txt"
	case $_rc in
	0) return 0 ;;
	3) status "$_fig" "n/a (module lacks release-consistent regions)" ;;
	*) status "$_fig" "failed: setup: $(grep -v '^$' "$ERR" | tail -n 1) (exit $_rc)" ;;
	esac
	return 1
}

# rc_run FIG OUT STATS CMD...: run the worker command CMD here (node 0,
# its output into OUT) after starting the peers of RC_PEERS ("K ARGS..."
# lines: node K runs ARGS, its output into OUT's name with .peerK.log);
# RC_WHAT names the run.  With STATS non-empty, every node's counters
# before and after go into STATS.  On failure set FIG's status and
# return 1.
rc_run() {
	_fig=$1
	_rout=$2
	_rstats=$3
	shift 3
	[ -z "$_rstats" ] || { : > "$_rstats"; stats_snap before "$_rstats"; }
	_rpids=
	while read -r _rk _rcmd; do
		[ -n "$_rk" ] || continue
		# shellcheck disable=SC2086
		on_node "$_rk" $_rcmd > "${_rout%.txt}.peer$_rk.log" 2>&1 &
		_rpids="$_rpids $_rk:$!"
	done <<< "$RC_PEERS"
	step "$_fig" "$RC_WHAT" "$@" > "$_rout"
	_rc=$?
	for _rp in $_rpids; do
		if ! wait "${_rp#*:}" && [ $_rc = 0 ]; then
			status "$_fig" "failed: $RC_WHAT: worker on node ${_rp%%:*}: $(tail -n 1 "${_rout%.txt}.peer${_rp%%:*}.log")"
			_rc=1
		fi
	done
	[ -z "$_rstats" ] || stats_snap after "$_rstats"
	return $_rc
}

# fig_false_sharing: every node writes its own words, interleaved with the
# others' in the same pages (FS = PAGESxKxPHASES: K steps of each word
# per phase, a barrier after each phase), on a sequential region and then
# on a release region, in every repetition.
fig_false_sharing() {
	sdsm_gate false_sharing COHERENT_MEMORY REGIONS PLACEMENT BARRIERS ||
		return
	_pg=${FS%%x*}
	_k=$(echo "$FS" | cut -dx -f2)
	_ph=${FS##*x}
	for r in $(seq 1 "$REPS"); do
		for m in seq release; do
			log "false_sharing $m rep $r: $NR nodes, $FS"
			_n=bfs-$m-$r
			rc_setup false_sharing "$RCB" fs-setup $_n $m "$_pg" "$NR" ||
				return
			RC_PEERS=$(for k in $(seq 1 $((NR - 1))); do
				echo "$k $RCB fs-work $_n $m $_pg $NR $k $_k $_ph --timeout 120"
			done)
			_st=
			[ "$r" = 1 ] && _st=$B/false_sharing_$m.stats.txt
			RC_WHAT="false sharing on a $m region" rc_run false_sharing \
				"$B/false_sharing_$m.$r.txt" "$_st" "$RCB" fs-work \
				$_n $m "$_pg" "$NR" 0 "$_k" "$_ph" --verify --timeout 120
			_rc=$?
			destroy $_n
			[ $_rc = 0 ] || return
		done
	done
	status false_sharing ok
}

# fig_jacobi: Jacobi sweeps of a JACOBI (NxITERS) grid on release regions,
# on node 0 alone, then on nodes 0 and 1, in every repetition.
fig_jacobi() {
	sdsm_gate jacobi COHERENT_MEMORY REGIONS PLACEMENT BARRIERS || return
	_jn=${JACOBI%%x*}
	_it=${JACOBI##*x}
	for r in $(seq 1 "$REPS"); do
		for w in 1 2; do
			log "jacobi $w node(s) rep $r: $JACOBI"
			_p=bjc$w-$r
			rc_setup jacobi "$RCB" jacobi-setup $_p "$_jn" $w || return
			RC_PEERS=
			[ $w = 2 ] && RC_PEERS="1 $RCB jacobi-work $_p $_jn 2 1 $_it --timeout 300"
			_st=
			[ "$r" = 1 ] && _st=$B/jacobi_$w.stats.txt
			RC_WHAT="jacobi on $w node(s)" rc_run jacobi \
				"$B/jacobi_$w.$r.txt" "$_st" "$RCB" jacobi-work $_p \
				"$_jn" $w 0 "$_it" --verify --timeout 300
			_rc=$?
			destroy $_p-a
			destroy $_p-b
			[ $_rc = 0 ] || return
		done
	done
	status jacobi ok
}

# ---- unmodified pthread programs through the shim (sdsmctl -N) ---------

SDSMCTL=${BENCH_SDSMCTL:-$SDSM_ROOT/tools/sdsmctl/sdsmctl}
SDSMD=${BENCH_SDSMD:-$SDSM_ROOT/tools/sdsmd/sdsmd}
SHIM_PROGS="matmul heat"
SHIM_CFGS="native n1 n2 n3"

# shim_status PROG STATUS: the same status for every figure of PROG.
shim_status() {
	for c in $SHIM_CFGS; do
		status "shim_$1_$c" "$2"
	done
}

# stats_snap PHASE FILE: every node's counters (guest.sh stats) into FILE.
stats_snap() {
	for k in $(seq 0 $((NR - 1))); do
		on_node "$k" "$SDSM_ROOT/tools/bench/guest.sh" stats |
			sed "s/^/$1 $k /" >> "$2"
	done
}

# The job regions of this node's launchers: gone once a job has ended
# everywhere (owned regions are destroyed after the launcher exits).
shim_no_job_left() {
	! grep -q '^j\.0\.' "$S"/regions/*/name 2> /dev/null
}

# has_region NAME: node 0 knows a region NAME (the glob is expanded at
# each call: wait_until must not expand it once, before the region exists).
has_region() {
	grep -qx "$1" "$S"/regions/*/name 2> /dev/null
}

# sdsmd on every node K, started here and stopped by its pid (in node K's
# /tmp/bench-sdsmd.K.pid); ready once node 0 sees every inbox sdsmd.K.
shim_agents_start() {
	for k in $(seq 0 $((NR - 1))); do
		# shellcheck disable=SC2016
		on_node "$k" sh -c '"$1" > /tmp/bench-sdsmd.$2.log 2>&1 < /dev/null &
			echo $! > /tmp/bench-sdsmd.$2.pid' sh "$SDSMD" "$k" \
			>> "$B/log.txt" 2>&1
	done
	for k in $(seq 0 $((NR - 1))); do
		if ! wait_until 60 has_region "sdsmd.$k"; then
			echo "sdsmd on node $k did not start: $(on_node "$k" \
				tail -n 2 "/tmp/bench-sdsmd.$k.log" | tr '\n' ' ')"
			return 1
		fi
	done
}

shim_agents_stop() {
	for k in $(seq 0 $((NR - 1))); do
		# shellcheck disable=SC2016
		on_node "$k" sh -c 'f=/tmp/bench-sdsmd.$1.pid; [ -s "$f" ] &&
			kill "$(cat "$f")"; rm -f "$f"' sh "$k" >> "$B/log.txt" 2>&1
	done
}

# The agents' logs, after a failure.
shim_agent_logs() {
	for k in $(seq 0 $((NR - 1))); do
		log "node $k sdsmd: $(on_node "$k" tail -n 5 \
			"/tmp/bench-sdsmd.$k.log" | tr '\n' '|')"
	done
}

# shim_prog_cmd PROG: the program and its arguments, into PCMD.
shim_prog_cmd() {
	case $1 in
	matmul) PCMD=("$BIN/pmatmul" "$SHIM_MM_N") ;;
	heat) PCMD=("$BIN/pheat" "${SHIM_HEAT%%x*}" "$(echo "$SHIM_HEAT" |
		cut -dx -f2)" "${SHIM_HEAT##*x}") ;;
	esac
}

# shim_one PROG CFG REP: one timed run; on failure set the figure's status
# (with the tail of the run's standard error, which has the workers') and
# return 1.
shim_one() {
	_f=shim_$1_$2
	_o=$B/$_f.$3.txt
	_e=$B/$_f.$3.err
	shim_prog_cmd "$1"
	case $2 in
	native) _cmd=("${PCMD[@]}") ;;
	n1) _cmd=("$SDSMCTL" -N 0 -- "${PCMD[@]}") ;;
	n2) _cmd=("$SDSMCTL" -N "0,1" -- "${PCMD[@]}") ;;
	n3) _cmd=("$SDSMCTL" -N "0,1,2" -- "${PCMD[@]}") ;;
	esac
	log "$_f rep $3: ${_cmd[*]}"
	if [ "$2" != native ]; then
		# The previous job's regions go after its launcher exits.
		wait_until 60 shim_no_job_left ||
			log "$_f: job regions of an earlier run are still there"
		[ "$3" = 1 ] && { : > "$B/$_f.stats.txt"; stats_snap before "$B/$_f.stats.txt"; }
	fi
	_t0=$(date +%s%N)
	vc_bounded "$SHIM_BOUND" "${_cmd[@]}" > "$_o" 2> "$_e"
	_rc=$?
	_t1=$(date +%s%N)
	[ "$2" != native ] && [ "$3" = 1 ] && stats_snap after "$B/$_f.stats.txt"
	printf 'wall_seconds=%d.%09d\nexit=%d\n' $(((_t1 - _t0) / 1000000000)) \
		$(((_t1 - _t0) % 1000000000)) "$_rc" >> "$_o"
	if [ $_rc = 0 ] && grep -q '^seconds=' "$_o" &&
	   grep -q '^checksum=' "$_o"; then
		return 0
	fi
	tail -n 5 "$_e" | sed "s/^/$_f rep $3 stderr: /" >> "$B/log.txt"
	_why="exit $_rc"
	[ $_rc = 124 ] && _why="timed out after ${SHIM_BOUND}s"
	[ $_rc = 0 ] && _why="no seconds= or checksum= in its output"
	status "$_f" "failed: rep $3: $_why: $(grep -v '^$' "$_e" | tail -n 1)"
	[ "$2" != native ] && shim_agent_logs
	return 1
}

fig_shim() {
	_gate_ok=1
	for p in $SHIM_PROGS; do
		sdsm_gate "shim_${p}_n1" COHERENT_MEMORY REGIONS PLACEMENT FUTEX ||
			_gate_ok=0
	done
	if [ $_gate_ok = 0 ]; then
		_st=$(cat "$B/status.shim_matmul_n1")
		for p in $SHIM_PROGS; do
			shim_status "$p" "$_st"
		done
		return
	fi
	for x in "$SDSMCTL" "$SDSMD" "$BIN/pmatmul" "$BIN/pheat"; do
		[ -x "$x" ] && continue
		for p in $SHIM_PROGS; do
			shim_status "$p" "failed: $x missing (make all)"
		done
		return
	done
	_dead=
	for p in $SHIM_PROGS; do
		shim_prog_cmd "$p"
		log "shim_$p serial reference: ${PCMD[0]} --serial ${PCMD[*]:1}"
		if ! vc_bounded "$SHIM_BOUND" "${PCMD[0]}" --serial \
			"${PCMD[@]:1}" > "$B/shim_${p}_serial.txt" 2> "$ERR"; then
			shim_status "$p" "failed: the --serial reference run: $(tail -n 1 "$ERR")"
			_dead="$_dead $p"
		fi
	done
	if ! _why=$(shim_agents_start); then
		for p in $SHIM_PROGS; do
			shim_status "$p" "failed: $_why"
		done
		shim_agents_stop
		return
	fi
	if [ "$NR" -lt 3 ]; then
		for p in $SHIM_PROGS; do
			status "shim_${p}_n3" "n/a (needs 3 nodes, cluster has $NR)"
			_dead="$_dead ${p}_n3"
		done
	fi
	for r in $(seq 1 "$REPS"); do
		for p in $SHIM_PROGS; do
			case " $_dead " in *" $p "*) continue ;; esac
			for c in $SHIM_CFGS; do
				case " $_dead " in *" ${p}_$c "*) continue ;; esac
				shim_one "$p" "$c" "$r" || _dead="$_dead ${p}_$c"
			done
		done
	done
	shim_agents_stop
	for p in $SHIM_PROGS; do
		case " $_dead " in *" $p "*) continue ;; esac
		for c in $SHIM_CFGS; do
			case " $_dead " in *" ${p}_$c "*) continue ;; esac
			status "shim_${p}_$c" ok
		done
	done
}

# part NAME: whether --only (if given) selects the part NAME.
part() {
	case ",${ONLY:-$1}," in
	*,"$1",*) return 0 ;;
	esac
	log "$1: not selected (--only $ONLY)"
	return 1
}

# prefetch_set PAGES: prefetch_pages on every node (Documentation/
# coherent-memory.rst, "Prefetch and fault-around").  The latency and
# cost figures time one fault each, so they run with prefetch off: page by
# page, a read-ahead would turn most of their faults into hits.  The rest
# run as loaded.
prefetch_set() {
	for k in $(seq 0 $((NR - 1))); do
		on_node "$k" sh -c "echo $1 > $PREFETCH_PARAM" ||
			log "node $k: cannot set prefetch_pages to $1"
	done
}

log "bench starts: $NR nodes, $REPS repetitions, features: $FEATURES"
part perftest && baseline_perftest
part fio_tmpfs && baseline_fio
[ $MODULE_OK = 0 ] || prefetch_set 0
part read_fault && fig_read_fault
part read_fault_scale && fig_read_fault_scale
part read_fault_nodes && fig_read_fault_nodes
if part write_fault; then
	fig_write_fault 1
	fig_write_fault 2
fi
part pingpong && fig_pingpong
[ $MODULE_OK = 0 ] || prefetch_set "$PREFETCH_LOADED"
if part fio_sdsm; then
	for w in remote local; do
		for m in seq rand; do
			fig_fio_sdsm $w $m
		done
	done
fi
part matmul && fig_matmul
part false_sharing && fig_false_sharing
part jacobi && fig_jacobi
part shim && fig_shim
log "bench done"
exit 0
