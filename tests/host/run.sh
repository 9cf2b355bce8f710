#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the host test programs given as arguments as one TAP 13 stream:
# each program numbers its tests after the previous one's.  The sanitizer
# build (name ending in -san) runs a tenth of the schedules unless
# SDSM_SAN_SCHEDULES says otherwise.  Exit status 1 if any test failed.
set -u
total=0
for p in "$@"; do
	n=$(./"$p" --count) || exit 1
	total=$((total + n))
done
echo "TAP version 13"
echo "1..$total"
first=1
rc=0
seed=${SDSM_SEED:-$(date +%s)}
sched=${SDSM_SCHEDULES:-5000}
for p in "$@"; do
	n=$(./"$p" --count)
	case $p in
	*-san)	s=${SDSM_SAN_SCHEDULES:-$((sched / 10 > 0 ? sched / 10 : 1))}
		prefix="[asan+ubsan] " ;;
	*)	s=$sched
		prefix= ;;
	esac
	SDSM_SEED=$seed SDSM_SCHEDULES=$s ./"$p" --no-plan --first "$first" \
		--prefix "$prefix" || rc=1
	first=$((first + n))
done
exit $rc
