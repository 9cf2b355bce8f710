#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: boot a 3-node virtual RDMA cluster and show sdsm working on it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
exec tools/vcluster/vcluster run -n "${DEMO_NODES:-3}" --on 0 --timeout 600 \
	-- tools/demo-node.sh
