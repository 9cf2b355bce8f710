#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing sdsm needs on a Debian 12 machine
# (systemd and udev: the packages suite boots the guests with them;
# procps: the guests run kill(1), pkill and pgrep).
# Idempotent and quiet when everything is present; needs root otherwise.
# `deps.sh deb`: also what `make deb` and its test need (debhelper, DKMS,
# lintian); the plain build never needs them.  `deps.sh kernel`: only what
# the debug kernel's build (tools/kernel/build.sh) needs, so that make
# check can start that build before the rest is installed.
set -eu

kernel_pkgs="build-essential bc bison flex libelf-dev xz-utils linux-source-6.1"
pkgs="$kernel_pkgs kmod cpio zstd lbzip2 pigz \
linux-image-amd64 linux-headers-amd64 \
qemu-system-x86 busybox-static iproute2 procps \
rdma-core ibverbs-utils perftest fio sparse python3 \
pkg-config gnuplot-nox man-db groff-base keyutils systemd udev"
case "${1:-}" in
'') ;;
deb) pkgs="$pkgs debhelper dh-dkms dkms lintian fakeroot dpkg-dev" ;;
kernel) pkgs=$kernel_pkgs ;;
*) echo "deps: usage: deps.sh [deb|kernel]" >&2; exit 2 ;;
esac

missing=
for p in $pkgs; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to install packages" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Package lists fetched in the last half hour (a deps.sh run just before,
# `deps.sh kernel` in make check) are used as they are.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' \
		-mmin -30 2>/dev/null | head -n 1)" ]; then
	apt-get update -q >/dev/null
fi
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
