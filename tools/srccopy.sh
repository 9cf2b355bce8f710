#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srccopy.sh DEST: copy this tree's source files (tracked and new files
# that are not ignored: no build products, no out/ or .cache/) to DEST,
# which must not exist.  For building packages and install tests from a
# clean tree without touching the work tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$1
[ ! -e "$dest" ] || { echo "srccopy: $dest exists" >&2; exit 1; }
mkdir -p "$dest"
cd "$top"
git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do
		# a file deleted but still tracked is not part of the tree
		[ -e "$f" ] && printf '%s\0' "$f"
	done | cpio -0 -pdm --quiet "$dest"
