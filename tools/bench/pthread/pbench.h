/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What pmatmul.c and pheat.c share: a monotonic clock in seconds and the
 * FNV-1a checksum of a result's bytes.  Plain C, no sdsm header: the
 * programs stay ordinary pthread programs.
 */
#ifndef PBENCH_H
#define PBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* FNV-1a of the bytes of @len doubles at @m. */
static inline uint64_t checksum(const double *m, size_t len)
{
	const unsigned char *p = (const unsigned char *)m;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len * sizeof(double); i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
