#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the top Makefile's build flow (TAP), run by `make check` before
# anything is built.  They use a fake system root (SDSM_SYSROOT, read by
# tools/kver.sh) so that the kernel headers can be "installed" in the middle
# of a run, as tools/deps.sh does on a fresh machine, and a probe makefile
# passed in MAKEFILES, which every make of the run, children included, reads.
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

fake_kver=6.1.0-99-amd64
cat > "$tmp/probe.mk" <<EOT
# Install a kernel into the fake root, as deps does, then start a child make.
sdsm-probe-install:
	@mkdir -p \$(SDSM_SYSROOT)/usr/src/linux-headers-$fake_kver \\
		\$(SDSM_SYSROOT)/lib/modules/$fake_kver/kernel \\
		\$(SDSM_SYSROOT)/boot
	@touch \$(SDSM_SYSROOT)/boot/vmlinuz-$fake_kver
	@\$(MAKE) -s --no-print-directory sdsm-probe-kver
sdsm-probe-kver:
	@echo "KVER=\$(KVER)"
sdsm-probe-env:
	@env | grep -E '^(KVER|KDIR)=' || echo none
EOT

echo "TAP version 13"
echo "1..5"

# 1. Nothing computed at start may reach the commands make runs.
mkdir -p "$tmp/empty"
out=$(cd "$top" && SDSM_SYSROOT=$tmp/empty MAKEFILES=$tmp/probe.mk \
	make -s --no-print-directory sdsm-probe-env 2>&1)
[ "$out" = none ]
ok $? "the top Makefile exports no kernel version or tree (got: $out)"

# 2. The fresh-machine failure: headers appear during the run (deps), and a
# make started afterwards must find them instead of inheriting "".
mkdir -p "$tmp/root"
out=$(cd "$top" && SDSM_SYSROOT=$tmp/root MAKEFILES=$tmp/probe.mk \
	make -s --no-print-directory sdsm-probe-install 2>&1)
[ "$out" = "KVER=$fake_kver" ]
ok $? "a make started after deps installed headers finds them (got: $out)"

# 3. Building the module needs neither root nor apt when headers exist.
out=$(cd "$top" && make -n --no-print-directory module KDIR=/nonexistent 2>&1)
! grep -q 'deps\.sh' <<< "$out" && grep -q 'M=' <<< "$out"
ok $? "make module runs no dependency installer"

# 4. Without headers, make module says what is missing and fails.
out=$(cd "$top" && make --no-print-directory module KVER= 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -q 'no kernel headers found' <<< "$out"
ok $? "make module without headers fails with a message (status $rc)"

# 5. tools/kver.sh ignores a headers tree with no kernel image beside it.
mkdir -p "$tmp/half/usr/src/linux-headers-$fake_kver"
SDSM_SYSROOT=$tmp/half "$top/tools/kver.sh" > /dev/null 2>&1
[ $? -ne 0 ]
ok $? "kver.sh wants image, modules and headers of one release"

[ $fails -eq 0 ]
