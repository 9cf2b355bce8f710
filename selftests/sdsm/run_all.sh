#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_all.sh - every cluster test suite in one boot of the cluster, as
# `make check` runs it on node 0 of a 3-node vcluster:
#
#   tools/vcluster/vcluster run -n 3 --on 0 -- selftests/sdsm/run_all.sh
#
# Runs each suite in turn (each prints its own TAP stream and restores the
# cluster after every test) and exits non-zero if any suite failed.  A
# suite that cannot start reports one failing TAP line of its own, so a
# missing suite is never mistaken for a passing one.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
suites=${SDSM_SUITES:-"run_cluster_tests.sh sync_tests.sh sdsmctl_tests.sh"}
rc=0
for s in $suites; do
	echo "# ==== suite $s ===="
	if [ ! -x "$here/$s" ]; then
		echo "not ok 1 - suite $s is missing or not executable"
		rc=1
		continue
	fi
	"$here/$s"
	st=$?
	echo "# ==== suite $s exit status $st ===="
	[ $st -eq 0 ] || rc=1
done
exit $rc
