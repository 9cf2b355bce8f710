#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkdeb.sh [OUTDIR]: build the Debian packages of sdsm (debian/) from a copy
# of this tree's source files (tools/srccopy.sh: no build products) in
# OUTDIR/sdsm-VERSION, with dpkg-buildpackage; the .debs land
# in OUTDIR (default out/deb).  Then lintian on them: an error fails, the
# warnings are listed in OUTDIR/lintian.log.  `make deb` runs this.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out/deb}
version=$(cat "$top/VERSION")
src=$out/sdsm-$version

rm -rf "$out"
mkdir -p "$out"
"$top/tools/srccopy.sh" "$src"
cl=$(cd "$src" && dpkg-parsechangelog -S Version)
if [ "$cl" != "$version" ]; then
	echo "mkdeb: debian/changelog is at $cl, VERSION is $version" >&2
	exit 1
fi
echo "mkdeb: building sdsm $version in $src"
(cd "$src" && dpkg-buildpackage -b -us -uc -j"$(nproc)") \
	> "$out/build.log" 2>&1 || {
	tail -40 "$out/build.log" >&2
	echo "mkdeb: dpkg-buildpackage failed, see $out/build.log" >&2
	exit 1
}
ls "$out"/*.deb
changes=$(ls "$out"/sdsm_"${version}"_*.changes)
rc=0
lintian --fail-on error --tag-display-limit 0 -I "$changes" \
	> "$out/lintian.log" 2>&1 || rc=$?
echo "mkdeb: lintian: $(grep -c '^E:' "$out/lintian.log") errors," \
	"$(grep -c '^W:' "$out/lintian.log") warnings, $(grep -c '^I:' "$out/lintian.log") infos ($out/lintian.log)"
grep -E '^(E|W):' "$out/lintian.log" || true
[ $rc -eq 0 ] || echo "mkdeb: lintian failed (status $rc)" >&2
exit $rc
