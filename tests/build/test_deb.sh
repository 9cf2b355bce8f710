#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of `make deb` (TAP), run by `make check` in its package step (about
# 2 minutes on 2 cores): builds the Debian packages into out/deb
# (tools/mkdeb.sh, lintian included), unpacks them into out/deb/root
# (dpkg -x: nothing is installed on this host), checks what they hold,
# builds sdsm.ko with DKMS from sdsm-dkms's source for the kernel the test
# guests boot (and runs depmod on a module tree with it, as dkms install
# would), and builds selftests/sdsm/pkg_prog against libsdsm-dev.  The
# cluster suite "packages" (pkg_tests.sh) then runs these in the guests.
#
# DKMS runs with private source and build trees under out/deb; it still
# signs the module with its host key (/var/lib/dkms/mok.key, made on
# first use), as every DKMS build on this host does.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/out/deb
n=0 fails=0
version=$(cat "$top/VERSION")
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

diag() {
	tail -n 30 "$1" | sed 's/^/# /'
}

echo "TAP version 13"
echo "1..12"

t0=$(date +%s)
mkdir -p "$top/out"
"$top/tools/mkdeb.sh" "$out" > "$top/out/mkdeb.log" 2>&1
rc=$?
mv "$top/out/mkdeb.log" "$out/mkdeb.log" 2>/dev/null
diag "$out/mkdeb.log"
ok $rc "make deb: packages built, lintian finds no error ($(( $(date +%s) - t0 ))s)"

want="sdsm-dkms_${version}_all.deb libsdsm1_${version}_$arch.deb
libsdsm-dev_${version}_$arch.deb sdsm-tools_${version}_$arch.deb"
missing=
for d in $want; do
	[ -f "$out/$d" ] || missing="$missing $d"
done
[ -z "$missing" ]
ok $? "the four packages exist${missing:+ (missing:$missing)}"

root=$out/root
rm -rf "$root" "$out/stage"
mkdir -p "$root" "$out/stage"
rc=0
for d in $want; do
	[ -f "$out/$d" ] && { dpkg -x "$out/$d" "$root" || rc=1; }
done
lib=$root/usr/lib/$ma/libsdsm.so.1
soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ $rc -eq 0 ] && [ "$soname" = libsdsm.so.1 ] &&
	[ -x "$root/usr/bin/sdsmctl" ] &&
	[ -f "$root/usr/lib/$ma/sdsm/libsdsm-preload.so" ] &&
	[ -f "$root/lib/udev/rules.d/60-sdsm.rules" ] &&
	[ -f "$root/lib/systemd/system/sdsm.service" ] &&
	[ -f "$root/lib/modprobe.d/sdsm.conf" ] &&
	[ -f "$root/usr/lib/sysusers.d/sdsm.conf" ] &&
	grep -qx prefix=/usr "$root/usr/lib/$ma/pkgconfig/libsdsm.pc"
ok $? "unpacked: libsdsm.so.1 (SONAME '$soname'), sdsmctl, shim, unit, udev, modprobe.d, sysusers.d, libsdsm.pc for /usr"

# sdsmd's kernel.pid_max as a sysctl.d file of sdsm-tools, where
# systemd-sysctl reads it at boot (pkg_tests.sh "boot" shows it applied).
sysctl_f=usr/lib/sysctl.d/60-sdsm.conf
dpkg-deb -c "$out/sdsm-tools_${version}_$arch.deb" | grep -q " \./$sysctl_f\$" &&
	[ "$(sed -n 's/^kernel\.pid_max *= *//p' "$root/$sysctl_f")" = 4194304 ]
ok $? "sdsm-tools has /$sysctl_f with kernel.pid_max = 4194304"

# Every man page (not the .so aliases) names VERSION in its .TH line
# (the sources say @VERSION@; make install fills it in).
bad= npages=0
for f in "$root"/usr/share/man/man*/*; do
	[ -L "$f" ] && continue
	th=$(zcat -f "$f" | sed -n '1,/^\.TH /{/^\.so /q;/^\.TH /p}')
	[ -n "$th" ] || continue
	npages=$((npages + 1))
	[ "$(awk -F'"' '{print $2}' <<< "$th")" = "sdsm $version" ] || bad="$bad ${f##*/}"
done
[ -z "$bad" ] && [ "$npages" -ge 2 ]
ok $? "every packaged man page's .TH says sdsm $version ($npages pages${bad:+; not:$bad})"

out_man=$(MANPAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 man -M "$root/usr/share/man" 3 sdsm_free 2>&1)
grep -q sdsm_alloc_interleaved <<< "$out_man"
ok $? "man sdsm_free works from libsdsm-dev"

v=$(LD_LIBRARY_PATH=$root/usr/lib/$ma "$root/usr/bin/sdsmctl" --version 2>&1)
[ "$v" = "sdsmctl (sdsm) $version" ] &&
	dpkg-deb -f "$out/sdsm-tools_${version}_$arch.deb" Version | grep -qx "$version"
ok $? "sdsm-tools is $version and its sdsmctl says so (got '$v')"

# DKMS from the packaged source, for the kernel the guests boot.
kver=$("$top/tools/kver.sh" 2>/dev/null)
if [ -z "$kver" ] || ! command -v dkms > /dev/null; then
	echo "ok $((n + 1)) - dkms build # SKIP no dkms or no Debian kernel headers"
	echo "ok $((n + 2)) - depmod # SKIP no dkms or no Debian kernel headers"
	n=$((n + 2))
else
	mkdir -p "$out/dkms"
	t0=$(date +%s)
	dkms build -m sdsm -v "$version" -k "$kver" \
		--sourcetree "$root/usr/src" --dkmstree "$out/dkms" \
		> "$out/dkms.log" 2>&1
	rc=$?
	ko=$out/dkms/sdsm/$version/$kver/$(uname -m)/module/sdsm.ko
	[ $rc -ne 0 ] && diag "$out/dkms.log"
	[ $rc -eq 0 ] && [ -f "$ko" ] &&
		[ "$(modinfo -F version "$ko")" = "$version" ] &&
		modinfo -F vermagic "$ko" | grep -q "^$kver " &&
		cp "$ko" "$out/stage/sdsm.ko"
	ok $? "dkms build -k $kver from sdsm-dkms: sdsm.ko version $version ($(( $(date +%s) - t0 ))s)"

	# What `dkms install` then does on a node: sdsm.ko into
	# /lib/modules/KVER/updates/dkms and depmod -a KVER.  The guests'
	# module tree is this host's (9p), and depmod over all of it in a
	# TCG guest takes minutes, so it runs here, on a tree of that
	# kernel's modules plus sdsm.ko; pkg_tests.sh "boot" copies the
	# result into each node's root, where modprobe finds sdsm.
	m=$out/stage/modules/lib/modules/$kver
	mkdir -p "$m/updates/dkms"
	ln -s "/lib/modules/$kver/kernel" "$m/kernel"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		cp "/lib/modules/$kver/$f" "$m/" 2>/dev/null
	done
	t0=$(date +%s)
	[ -f "$out/stage/sdsm.ko" ] && cp "$out/stage/sdsm.ko" "$m/updates/dkms/" &&
		depmod -b "$out/stage/modules" "$kver" > "$out/depmod.log" 2>&1 &&
		[ "$(grep -c . "$m/modules.dep")" -gt 1000 ] &&
		grep -q '^updates/dkms/sdsm.ko: .*kernel/drivers/infiniband/core/ib_core.ko' \
			"$m/modules.dep"
	ok $? "depmod $kver with sdsm.ko in updates/dkms: modules.dep lists it with its dependencies ($(( $(date +%s) - t0 ))s)"
fi

# The coherence program of pkg_tests.sh, against the packaged library
# alone (pkg-config in the unpacked root, no rpath).
# shellcheck disable=SC2046 # pkg-config prints words
cc -Wall -Wextra -Werror -o "$out/stage/pkg_prog" "$top/selftests/sdsm/pkg_prog.c" \
	$(PKG_CONFIG_LIBDIR=$root/usr/lib/$ma/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
		pkg-config --cflags --libs libsdsm) > "$out/cc.log" 2>&1
rc=$?
[ $rc -ne 0 ] && diag "$out/cc.log"
[ $rc -eq 0 ] && ! readelf -d "$out/stage/pkg_prog" | grep -qE 'RPATH|RUNPATH'
ok $? "pkg_prog builds with libsdsm-dev's pkg-config file"

# Lintian's warnings are reported, not failed on.
nw=$(grep -c '^W:' "$out/lintian.log" 2>/dev/null)
ne=$(grep -c '^E:' "$out/lintian.log" 2>/dev/null)
grep -E '^[EW]:' "$out/lintian.log" 2>/dev/null | sed 's/^/# /'
[ "$ne" = 0 ]
ok $? "lintian: $ne errors, $nw warnings"

cp "$out"/libsdsm1_"${version}"_"$arch".deb "$out"/sdsm-tools_"${version}"_"$arch".deb \
	"$out/stage/" 2>/dev/null
[ -f "$out/stage/sdsm.ko" ] && [ -x "$out/stage/pkg_prog" ] &&
	[ -f "$out/stage/libsdsm1_${version}_$arch.deb" ] &&
	[ -f "$out/stage/modules/lib/modules/$kver/modules.dep.bin" ]
ok $? "staged for the cluster suite in $out/stage"

[ $fails -eq 0 ]
