#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the release of the Debian kernel the guests run: the newest one with
# both an image in /boot and a headers tree in /usr/src. The host's own
# `uname -r` is not used; the host cannot load modules.  SDSM_SYSROOT, if
# set, is a directory to look in instead of / (tests/build/ uses it).
set -eu
root=${SDSM_SYSROOT:-}
best=
for d in "$root"/usr/src/linux-headers-*-amd64; do
	[ -d "$d" ] || continue
	v=${d#"$root"/usr/src/linux-headers-}
	[ -f "$root/boot/vmlinuz-$v" ] && [ -d "$root/lib/modules/$v/kernel" ] ||
		continue
	best="$best$v
"
done
v=$(printf '%s' "$best" | sort -V | tail -n 1)
if [ -z "$v" ]; then
	echo "kver.sh: no Debian kernel with image and headers; run 'make deps'" >&2
	exit 1
fi
echo "$v"
