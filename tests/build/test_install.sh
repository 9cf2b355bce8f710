#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of `make install DESTDIR=... PREFIX=...` (TAP), run by `make check`
# in its build step (and by `make check-install`).  They build and install
# from a copy of the source (tools/srccopy.sh), so the work tree's build is
# left alone, and need no root, no kernel headers and no network.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
version=$(cat "$top/VERSION")

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

# diag FILE: show a log as TAP comments.
diag() {
	tail -n 30 "$1" | sed 's/^/# /'
}

echo "TAP version 13"
echo "1..16"

"$top/tools/srccopy.sh" "$tmp/src"
root=$tmp/root
p=/opt/sdsm
make -s -C "$tmp/src" install DESTDIR="$root" PREFIX=$p > "$tmp/install.log" 2>&1
rc=$?
[ $rc -ne 0 ] && diag "$tmp/install.log"
ok $rc "make install DESTDIR=... PREFIX=$p"

# 2. What an install holds.
missing=
for f in $p/bin/sdsmctl $p/lib/libsdsm.so.1 $p/lib/libsdsm.so $p/lib/libsdsm.a \
	$p/lib/libsdsm-preload.so $p/lib/pkgconfig/libsdsm.pc \
	$p/include/sdsm.h $p/include/linux/sdsm.h \
	$p/share/man/man3/sdsm.3 $p/share/man/man3/sdsm_alloc.3 \
	$p/share/man/man8/sdsmctl.8 $p/share/sdsm/cluster.conf.example \
	$p/lib/systemd/system/sdsm.service $p/lib/sysusers.d/sdsm.conf \
	$p/lib/sysctl.d/60-sdsm.conf \
	/etc/udev/rules.d/60-sdsm.rules /etc/modprobe.d/sdsm.conf \
	/usr/src/sdsm-$version/dkms.conf /usr/src/sdsm-$version/Kbuild \
	/usr/src/sdsm-$version/kmod/Kbuild /usr/src/sdsm-$version/VERSION \
	/usr/src/sdsm-$version/uapi/linux/sdsm.h; do
	[ -e "$root$f" ] || missing="$missing $f"
done
for f in "$top"/kmod/*.[ch]; do
	case $f in *.mod.c) continue ;; esac
	[ -e "$root/usr/src/sdsm-$version/kmod/${f##*/}" ] ||
		missing="$missing /usr/src/sdsm-$version/kmod/${f##*/}"
done
[ -z "$missing" ]
ok $? "every file installed${missing:+ (missing:$missing)}"

# 3. The library: SONAME and versioned symbols.
lib=$root$p/lib/libsdsm.so.1
soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libsdsm.so.1 ] && [ "$(readlink "$root$p/lib/libsdsm.so")" = libsdsm.so.1 ]
ok $? "libsdsm.so.1 has SONAME libsdsm.so.1 (got '$soname'), libsdsm.so links to it"
nver=$(objdump -T "$lib" | grep -c ' SDSM_1\.[0-9]* *sdsm_')
nall=$(objdump -T "$lib" | awk '$2 == "g" && $4 == ".text"' | grep -c .)
[ "$nver" -gt 0 ] && [ "$nver" -eq "$nall" ]
ok $? "every exported function is versioned SDSM_1.x ($nver of $nall)"

# 4. libsdsm.pc names the PREFIX installed to; pkg-config finds the headers.
pc=$root$p/lib/pkgconfig/libsdsm.pc
grep -qx "prefix=$p" "$pc" && grep -qx "Version: $version" "$pc" &&
	[ "$(PKG_CONFIG_PATH=$root$p/lib/pkgconfig pkg-config --cflags libsdsm | tr -d " ")" = "-I$p/include" ]
ok $? "libsdsm.pc says prefix=$p and version $version"

# 5. A second install to another PREFIX from the same tree: its .pc must
# follow (it used to be generated once, saying /usr/local).
make -s -C "$tmp/src" install DESTDIR="$tmp/root2" PREFIX=/usr \
	LIBDIR=/usr/lib/x86_64-linux-gnu > "$tmp/install2.log" 2>&1 &&
	grep -qx prefix=/usr "$tmp/root2/usr/lib/x86_64-linux-gnu/pkgconfig/libsdsm.pc" &&
	grep -qx libdir=/usr/lib/x86_64-linux-gnu \
		"$tmp/root2/usr/lib/x86_64-linux-gnu/pkgconfig/libsdsm.pc"
ok $? "a reinstall with PREFIX=/usr writes a libsdsm.pc for /usr"

# 6. Every function of libsdsm.map has a man page: `man NAME` works.
man3=$root$p/share/man/man3
nomans=
# shellcheck disable=SC2013 # one symbol a line
for s in $(sed -n 's/^[[:space:]]*\(sdsm_[a-z0-9_]*\);.*/\1/p' "$top/userlib/libsdsm.map"); do
	[ -e "$man3/$s.3" ] || nomans="$nomans $s"
done
[ -z "$nomans" ]
ok $? "every exported function has a man page${nomans:+ (none for:$nomans)}"
out=$(MANPAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 man -M "$root$p/share/man" 3 sdsm_free 2>&1)
grep -q 'sdsm_alloc_interleaved' <<< "$out"
ok $? "man sdsm_free shows sdsm_alloc(3) (a .so alias)"

# 6b. The version of the man pages is VERSION: each source page's .TH says
# "sdsm @VERSION@" (never a version of its own), and install fills it in.
bad=
for f in "$top"/userlib/man/*.[0-9] "$top"/tools/*/*.[0-9]; do
	th=$(sed -n '1,/^\.TH /{/^\.so /q;/^\.TH /p}' "$f")
	[ -z "$th" ] || [ "$(awk -F'"' '{print $2}' <<< "$th")" = "sdsm @VERSION@" ] ||
		bad="$bad ${f#"$top"/}"
done
[ -z "$bad" ]
ok $? "every man page source's .TH says \"sdsm @VERSION@\"${bad:+ (not:$bad)}"
bad= npages=0
for f in "$root$p"/share/man/man*/*; do
	th=$(sed -n '1,/^\.TH /{/^\.so /q;/^\.TH /p}' "$f")
	[ -n "$th" ] || continue
	npages=$((npages + 1))
	[ "$(awk -F'"' '{print $2}' <<< "$th")" = "sdsm $version" ] || bad="$bad ${f##*/}"
done
[ -z "$bad" ] && [ "$npages" -ge 2 ]
ok $? "every installed man page's .TH says sdsm $version ($npages pages${bad:+; not:$bad})"

# 7. A program built against the installed headers and library alone.
# shellcheck disable=SC2046 # pkg-config prints words
cc -Wall -Wextra -Werror -o "$tmp/pkg_prog" "$top/selftests/sdsm/pkg_prog.c" \
	$(PKG_CONFIG_PATH=$root$p/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
		pkg-config --cflags --libs libsdsm) > "$tmp/cc.log" 2>&1
rc=$?
[ $rc -ne 0 ] && diag "$tmp/cc.log"
ok $rc "a program compiles and links with pkg-config libsdsm of the install"
res=$(LD_LIBRARY_PATH=$root$p/lib ldd "$tmp/pkg_prog" | awk '$1 == "libsdsm.so.1" {print $3}')
err=$(LD_LIBRARY_PATH=$root$p/lib "$tmp/pkg_prog" check x 1 1 2>&1)
rc=$?
# No /dev/sdsm on the host: it must run, and fail in sdsm_available.
[ "$res" = "$lib" ] && [ $rc -eq 1 ] && grep -q 'sdsm_available' <<< "$err"
ok $? "it runs with the installed libsdsm.so.1 ($res; status $rc: $err)"

# 8. sdsmctl: the one version; the preload shim where install put it.
v=$("$root$p/bin/sdsmctl" --version 2>&1)
[ "$v" = "sdsmctl (sdsm) $version" ]
ok $? "sdsmctl --version says $version (got '$v')"
grep -q "$p/lib/libsdsm-preload.so" "$root$p/bin/sdsmctl"
ok $? "sdsmctl looks for libsdsm-preload.so in $p/lib"

# 9. Configuration: the unit runs the installed sdsmctl; DKMS gets VERSION.
grep -qx "ExecStart=$p/bin/sdsmctl join /etc/sdsm/cluster.conf" \
	"$root$p/lib/systemd/system/sdsm.service" &&
	grep -qx "PACKAGE_VERSION=\"$version\"" "$root/usr/src/sdsm-$version/dkms.conf" &&
	! grep -rIq "@[A-Z]*@" "$root"
ok $? "sdsm.service and dkms.conf carry the install's paths and version"

# 10. debian/changelog is at VERSION.
cl=$(cd "$top" && dpkg-parsechangelog -S Version 2>/dev/null)
[ "$cl" = "$version" ]
ok $? "debian/changelog is at VERSION $version (got '$cl')"

[ $fails -eq 0 ]
