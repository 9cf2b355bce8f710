#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make bench`: see tools/bench/run.sh and Documentation/performance.rst.
exec "$(dirname "$0")/bench/run.sh" "$@"
