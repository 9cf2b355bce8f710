#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing sdsm needs on a Debian 12 machine
# (systemd and udev: the packages suite boots the guests with them;
# procps: the guests run kill(1), pkill and pgrep).
# Idempotent and quiet when everything is present; needs root otherwise.
# `deps.sh deb`: also what `make deb` and its test need (debhelper, DKMS,
# lintian); the plain build never needs them.
set -eu

pkgs="build-essential bc bison flex libelf-dev kmod cpio xz-utils zstd lbzip2 pigz \
linux-image-amd64 linux-headers-amd64 linux-source-6.1 \
qemu-system-x86 busybox-static iproute2 procps \
rdma-core ibverbs-utils perftest fio sparse python3 \
pkg-config gnuplot-nox man-db groff-base keyutils systemd udev"
if [ "${1:-}" = deb ]; then
	pkgs="$pkgs debhelper dh-dkms dkms lintian fakeroot dpkg-dev"
fi

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
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
