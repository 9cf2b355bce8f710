/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the unmodified programs of shim_tests.sh and preload_tests.sh (no
 * sdsm header, no libsdsm): the node this thread runs on, from sysfs.
 */
#ifndef PLAIN_NODE_H
#define PLAIN_NODE_H

#include <stdio.h>

/* This node's id (/sys/kernel/sdsm/node_id), or -1 without the module. */
static inline int node_id(void)
{
	FILE *f = fopen("/sys/kernel/sdsm/node_id", "r");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

#endif
