#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fuzz`: the long run of the typed fuzzer of /dev/sdsm
# (selftests/sdsm/fuzz_tests.sh) on a 3-node vcluster: FUZZ_CALLS (default
# 10^6) calls over all nodes together, within FUZZ_SECONDS (default 5400),
# on the project's debug kernel (KASAN, lockdep, kmemleak; tools/kernel/)
# when it is cached, else on Debian's kernel, saying so.  It never builds
# the debug kernel (40 minutes and more on 2 cores): `make module-debug`
# does.  FUZZ_THREADS and FUZZ_SEED are passed on; FUZZ_NODES (default 3)
# sizes the cluster.  See Documentation/testing.rst.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
: "${FUZZ_CALLS:=1000000}"
: "${FUZZ_SECONDS:=5400}"
: "${FUZZ_NODES:=3}"

# The directory tools/kernel/build.sh keeps the debug kernel in: the same
# key (source package version, config fragment, build.sh itself).
cache=${SDSM_KERNEL_CACHE:-/var/cache/sdsm/kernel}
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
key=$( { echo "$srcver"; cat tools/kernel/sdsm-debug.config \
	tools/kernel/build.sh; } | sha256sum | cut -c1-16)
kdir=$cache/6.1-$key
kernel=()
if [ -n "$srcver" ] && [ -f "$kdir/.done" ]; then
	echo "fuzz: on the debug kernel in $kdir"
	make -s module-debug
	export VCLUSTER_KO=.cache/kmod-debug/kmod/sdsm.ko
	kernel=(--kernel "$kdir")
else
	echo "fuzz: the debug kernel is not cached ($kdir; 'make module-debug' builds it, 40 minutes or more): running on Debian's kernel"
fi
vars=(FUZZ_CALLS="$FUZZ_CALLS" FUZZ_SECONDS="$FUZZ_SECONDS")
[ -n "${FUZZ_THREADS:-}" ] && vars+=(FUZZ_THREADS="$FUZZ_THREADS")
[ -n "${FUZZ_SEED:-}" ] && vars+=(FUZZ_SEED="$FUZZ_SEED")
exec tools/vcluster/vcluster run -n "$FUZZ_NODES" --on 0 --mem 1024 \
	"${kernel[@]}" --timeout $((FUZZ_SECONDS + 900)) -- \
	env "${vars[@]}" selftests/sdsm/fuzz_tests.sh
