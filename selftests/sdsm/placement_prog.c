// SPDX-License-Identifier: GPL-2.0
/*
 * placement_prog - allocate with libsdsm's current policy (SDSM_POLICY, as
 * sdsmctl sets it), write every page, and print each page's home node from
 * SDSM_IOC_QUERY_HOME.  Used by sdsmctl_tests.sh:
 *
 *	sdsmctl --interleave=all -- placement_prog 6
 *	homes: 0 1 2 0 1 2
 *
 * Usage: placement_prog [PAGES]   (default 6, at most 4096)
 * Exit: 0 ok, 1 failure, 4 (kselftest SKIP) when the module lacks
 * regions or placement.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdsm.h"

#define KSFT_SKIP	4

int main(int argc, char **argv)
{
	void *addrs[4096];
	int homes[4096];
	char *end, *mem;
	long pages = 6, i;
	uint64_t need = SDSM_FEATURE_REGIONS | SDSM_FEATURE_PLACEMENT;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [PAGES]\n", argv[0]);
		return 2;
	}
	if (argc == 2) {
		errno = 0;
		pages = strtol(argv[1], &end, 10);
		if (errno || *end || pages < 1 || pages > 4096) {
			fprintf(stderr, "%s: PAGES must be 1..4096\n", argv[0]);
			return 2;
		}
	}
	if (sdsm_available() < 0) {
		fprintf(stderr, "placement_prog: %s\n", sdsm_last_error());
		return 1;
	}
	if (sdsm_has_feature(need) != 1) {
		printf("SKIP: module lacks regions or placement\n");
		return KSFT_SKIP;
	}
	mem = sdsm_alloc(pages * SDSM_PAGE_SIZE);
	if (!mem) {
		fprintf(stderr, "placement_prog: sdsm_alloc: %s\n",
			sdsm_last_error());
		return 1;
	}
	for (i = 0; i < pages; i++) {
		mem[i * SDSM_PAGE_SIZE] = (char)i;
		addrs[i] = mem + i * SDSM_PAGE_SIZE;
	}
	if (sdsm_query_homes(pages, addrs, homes) < 0) {
		fprintf(stderr, "placement_prog: %s\n", sdsm_last_error());
		return 1;
	}
	printf("homes:");
	for (i = 0; i < pages; i++)
		printf(" %d", homes[i]);
	printf("\n");
	if (sdsm_free(mem, pages * SDSM_PAGE_SIZE) < 0) {
		fprintf(stderr, "placement_prog: sdsm_free: %s\n",
			sdsm_last_error());
		return 1;
	}
	return 0;
}
