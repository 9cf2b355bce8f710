#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# aliases.sh MANDIR PAGE...: for every name in the NAME section of each
# PAGE (the names before "\-") that is not the page itself, write
# MANDIR/NAME.SECTION holding ".so manSECTION/PAGE", as rdma-core and
# man-pages do, so that `man NAME` opens PAGE.
set -eu
dir=$1
shift
for page in "$@"; do
	base=${page##*/}
	sect=${base##*.}
	names=$(sed -n '/^\.SH NAME/,/^\.SH/{/^\.SH/d;p}' "$page" |
		tr '\n' ' ' | sed 's/\\-.*//' | tr ',' ' ')
	[ -n "$names" ] || { echo "$page: no NAME section" >&2; exit 1; }
	for n in $names; do
		[ "$n.$sect" = "$base" ] && continue
		case $n in
		*[!A-Za-z0-9_]*) echo "$page: bad name '$n'" >&2; exit 1 ;;
		esac
		echo ".so man$sect/$base" > "$dir/$n.$sect"
		chmod 644 "$dir/$n.$sect"
	done
done
