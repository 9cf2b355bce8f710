// SPDX-License-Identifier: GPL-2.0
/*
 * pkg_prog - a coherence check built against an *installed* libsdsm (the
 * libsdsm-dev package, pkg-config libsdsm), for pkg_tests.sh:
 *
 *	pkg_prog write NAME PAGES SEED	create region NAME (interleaved over
 *					all nodes), write SEED + i to page i
 *	pkg_prog check NAME PAGES SEED	open NAME, expect those values
 *	pkg_prog destroy NAME
 *
 * Exit: 0 ok, 1 failure (the reason on stderr), 2 usage.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sdsm.h>

static int usage(void)
{
	fprintf(stderr, "usage: pkg_prog write|check NAME PAGES SEED | destroy NAME\n");
	return 2;
}

static int fail(const char *what)
{
	fprintf(stderr, "pkg_prog: %s: %s\n", what, sdsm_last_error());
	return 1;
}

int main(int argc, char **argv)
{
	struct sdsm_policy pol;
	unsigned long pages, i;
	uint64_t seed, *p;
	size_t size = 0;
	char *mem, *end;

	if (argc == 3 && !strcmp(argv[1], "destroy"))
		return sdsm_region_destroy(argv[2]) ? fail("destroy") : 0;
	if (argc != 5)
		return usage();
	errno = 0;
	pages = strtoul(argv[3], &end, 10);
	if (errno || *end || !pages || pages > 1024)
		return usage();
	seed = strtoull(argv[4], &end, 0);
	if (errno || *end)
		return usage();
	if (sdsm_available() < 0)
		return fail("sdsm_available");
	if (!strcmp(argv[1], "write")) {
		if (sdsm_parse_policy("interleave:all", sdsm_num_nodes(),
				      &pol) < 0)
			return fail("sdsm_parse_policy");
		mem = sdsm_region_create(argv[2], pages * SDSM_PAGE_SIZE, &pol,
					 SDSM_REGION_F_EXCL);
		if (!mem)
			return fail("sdsm_region_create");
		for (i = 0; i < pages; i++) {
			p = (uint64_t *)(mem + i * SDSM_PAGE_SIZE);
			*p = seed + i;
		}
	} else if (!strcmp(argv[1], "check")) {
		mem = sdsm_region_open(argv[2], &size);
		if (!mem)
			return fail("sdsm_region_open");
		if (size != pages * SDSM_PAGE_SIZE) {
			fprintf(stderr, "pkg_prog: %s is %zu bytes, expected %lu\n",
				argv[2], size, pages * SDSM_PAGE_SIZE);
			return 1;
		}
		for (i = 0; i < pages; i++) {
			p = (uint64_t *)(mem + i * SDSM_PAGE_SIZE);
			if (*p != seed + i) {
				fprintf(stderr, "pkg_prog: page %lu holds %llu, expected %llu\n",
					i, (unsigned long long)*p,
					(unsigned long long)(seed + i));
				return 1;
			}
		}
	} else {
		return usage();
	}
	if (sdsm_region_unmap(mem, pages * SDSM_PAGE_SIZE))
		return fail("sdsm_region_unmap");
	printf("%s %s: %lu pages ok\n", argv[1], argv[2], pages);
	return 0;
}
