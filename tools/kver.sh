#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the release of the Debian kernel the guests run: the newest one with
# both an image in /boot and a headers tree in /usr/src. The host's own
# `uname -r` is not used; the host cannot load modules.
set -eu
best=
for d in /usr/src/linux-headers-*-amd64; do
	[ -d "$d" ] || continue
	v=${d#/usr/src/linux-headers-}
	[ -f "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/kernel" ] || continue
	best="$best$v
"
done
v=$(printf '%s' "$best" | sort -V | tail -n 1)
if [ -z "$v" ]; then
	echo "kver.sh: no Debian kernel with image and headers; run 'make deps'" >&2
	exit 1
fi
echo "$v"
