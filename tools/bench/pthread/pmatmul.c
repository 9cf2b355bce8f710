// SPDX-License-Identifier: GPL-2.0
/*
 * pmatmul - an ordinary pthread matrix multiply (plain C, gcc -O2 -pthread,
 * no sdsm header, no libsdsm), for the shim figures of `make bench`: the
 * same binary runs natively and under `sdsmctl -N NODES`.
 *
 *   pmatmul N [THREADS]     C = A x B, N x N doubles, blocked; THREADS
 *                           defaults to sysconf(_SC_NPROCESSORS_ONLN)
 *   pmatmul --serial N      the same product in main, no thread at all:
 *                           the reference checksum
 *
 * main() mallocs A, B and C and fills A and B; thread t computes rows
 * [t*N/T, (t+1)*N/T) of C.  Every element of C is summed over k in the
 * same order whatever the rows per thread, so the result is bitwise the
 * same for any thread count.  Prints key=value lines: seconds (the
 * threads' start barrier to the last join; --serial: the product),
 * checksum (FNV-1a of C's bytes), threads, n, and thread_seconds: each
 * thread's own time from the start barrier to the end of its rows, by its
 * own clock (where the time of an unbalanced run goes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pbench.h"

#define BLOCK		32
#define MAX_THREADS	256

static size_t n;
static double *a, *b, *c;
static unsigned int nthreads;
static pthread_barrier_t start;
static double thread_seconds[MAX_THREADS];

/* Rows [r0, r1) of c = a x b, blocked; c starts zeroed. */
static void kernel(size_t r0, size_t r1)
{
	size_t ii, kk, jj, i, k, j;

	for (ii = r0; ii < r1; ii += BLOCK)
		for (kk = 0; kk < n; kk += BLOCK)
			for (jj = 0; jj < n; jj += BLOCK)
				for (i = ii; i < ii + BLOCK && i < r1; i++)
					for (k = kk; k < kk + BLOCK && k < n; k++) {
						double aik = a[i * n + k];

						for (j = jj; j < jj + BLOCK && j < n; j++)
							c[i * n + j] += aik * b[k * n + j];
					}
}

static void *worker(void *arg)
{
	size_t t = (uintptr_t)arg;

	double t0;

	pthread_barrier_wait(&start);
	t0 = now();
	kernel(t * n / nthreads, (t + 1) * n / nthreads);
	thread_seconds[t] = now() - t0;
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: pmatmul N [THREADS] | pmatmul --serial N\n");
	return 2;
}

int main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	int serial = argc > 1 && !strcmp(argv[1], "--serial");
	double t0, t1;
	size_t i, k;
	unsigned int t;
	long v;
	int err;

	if (argc < 2 + serial || argc > 3)
		return usage();
	v = atol(argv[1 + serial]);
	if (v < 1 || v > 8192)
		return usage();
	n = v;
	if (serial) {
		nthreads = 0;
	} else if (argc == 3) {
		v = atol(argv[2]);
		if (v < 1 || v > MAX_THREADS)
			return usage();
		nthreads = v;
	} else {
		v = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = v < 1 ? 1 : v > MAX_THREADS ? MAX_THREADS : v;
	}
	a = malloc(n * n * sizeof(*a));
	b = malloc(n * n * sizeof(*b));
	c = calloc(n * n, sizeof(*c));
	if (!a || !b || !c) {
		fprintf(stderr, "pmatmul: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < n; k++) {
			a[i * n + k] = (double)((int)((i * 13 + k * 7) % 31) - 15) / 16.0;
			b[i * n + k] = (double)((int)((i * 5 + k * 11) % 29) - 14) / 8.0;
		}
	if (serial) {
		t0 = now();
		kernel(0, n);
		t1 = now();
	} else {
		err = pthread_barrier_init(&start, NULL, nthreads + 1);
		for (t = 0; !err && t < nthreads; t++)
			err = pthread_create(&tid[t], NULL, worker,
					     (void *)(uintptr_t)t);
		if (err) {
			fprintf(stderr, "pmatmul: cannot start thread %u: %s\n",
				t, strerror(err));
			return 1;
		}
		pthread_barrier_wait(&start);
		t0 = now();
		for (t = 0; t < nthreads; t++)
			pthread_join(tid[t], NULL);
		t1 = now();
	}
	printf("seconds=%.6f\nchecksum=%016" PRIx64 "\nthreads=%u\nn=%zu\n",
	       t1 - t0, checksum(c, n * n), nthreads, n);
	if (nthreads) {
		printf("thread_seconds=");
		for (t = 0; t < nthreads; t++)
			printf("%s%.3f", t ? "," : "", thread_seconds[t]);
		printf("\n");
	}
	return 0;
}
