#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/kernel/build.sh: build the debug kernel of the cluster tests from
# Debian's linux-source-6.1 with tools/kernel/sdsm-debug.config, once, and
# print the directory that holds it: bzImage, kernel.release, and the built
# source tree src/ that out-of-tree modules build against (KDIR).
#
# The result is cached outside the clone, under $SDSM_KERNEL_CACHE
# (default /var/cache/sdsm/kernel), keyed by the source package's version,
# the config fragment and this script; it is rebuilt only when one of them
# changes.  Concurrent callers wait for one build (flock).  Progress goes to
# stderr and to build.log in the cache; stdout is only the directory.
# Each build takes some 1.8 GB: of those under other keys (other clones,
# branches, earlier configs) the $SDSM_KERNEL_KEEP - 1 used last are kept
# (default SDSM_KERNEL_KEEP=2), the rest removed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tarball=/usr/src/linux-source-6.1.tar.xz
frag=$top/tools/kernel/sdsm-debug.config
cache=${SDSM_KERNEL_CACHE:-/var/cache/sdsm/kernel}
keep=${SDSM_KERNEL_KEEP:-2}
case $keep in
'' | *[!0-9]* | 0*) echo "build.sh: SDSM_KERNEL_KEEP='$keep' is not a positive integer" >&2; exit 2 ;;
esac

[ -r "$tarball" ] || { echo "build.sh: $tarball missing: run make deps" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( { echo "$srcver"; cat "$frag" "$0"; } | sha256sum | cut -c1-16)
dir=$cache/6.1-$key
mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9

# prune: keep $dir and the keep-1 other completed builds used last (a
# build's .done is touched at each use), remove every other one.
prune() {
	local d
	touch "$dir/.done"
	find "$cache" -mindepth 2 -maxdepth 2 -name .done -printf '%T@ %h\n' |
		sort -rn | awk -v dir="$dir" '$2 != dir { print $2 }' |
		tail -n +"$keep" | while IFS= read -r d; do
			echo "build.sh: removing the debug kernel $d (SDSM_KERNEL_KEEP=$keep)" >&2
			rm -rf "$d"
		done
}

if [ -f "$dir/.done" ]; then
	prune
	echo "$dir"
	exit 0
fi

# Builds that failed or were stopped under other keys are garbage.
for d in "$cache"/6.1-*; do
	[ "$d" = "$dir" ] || [ -f "$d/.done" ] || rm -rf "$d"
done
t0=$(date +%s)
log=$dir/build.log
echo "build.sh: building the debug kernel into $dir (log $log)" >&2
# An interrupted build resumes: the tree is extracted and configured once.
if [ ! -f "$dir/.configured" ]; then
	rm -rf "$dir"
	mkdir -p "$dir/src"
	tar -C "$dir/src" --strip-components=1 -xf "$tarball"
	cd "$dir/src"
	{
		make tinyconfig
		scripts/kconfig/merge_config.sh -m .config "$frag"
		make olddefconfig
	} > "$log" 2>&1
else
	cd "$dir/src"
fi

# Every line of the fragment must have survived olddefconfig: a dependency
# that is not met drops an option silently.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=n) ! grep -qx "${line%=n}=y" .config ||
			{ echo "build.sh: ${line%=n} wanted off" >&2; bad=1; } ;;
	CONFIG_*=*) grep -qxF "$line" .config ||
			{ echo "build.sh: $line did not survive olddefconfig" >&2; bad=1; } ;;
	"# CONFIG_"*" is not set") grep -qxF "$line" .config ||
			{ echo "build.sh: wanted: $line" >&2; bad=1; } ;;
	esac
done < "$frag"
[ $bad = 0 ] || exit 1
touch "$dir/.configured"

make -j"$(nproc)" all >> "$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; echo "build.sh: kernel build failed" >&2; exit 1; }
cp arch/x86/boot/bzImage "$dir/bzImage"
make -s kernelrelease > "$dir/kernel.release"
echo "$(( $(date +%s) - t0 ))" > "$dir/build-seconds"
touch "$dir/.done"
prune
echo "build.sh: built $(cat "$dir/kernel.release") in $(cat "$dir/build-seconds")s" >&2
echo "$dir"
