// SPDX-License-Identifier: GPL-2.0
/*
 * pheat - an ordinary pthread 2-D heat stencil (plain C, gcc -O2 -pthread,
 * no sdsm header, no libsdsm), the second program of the shim figures
 * (shim_heat) of `make bench`: the same binary runs natively and under
 * `sdsmctl -N NODES`.
 *
 *   pheat ROWS COLS STEPS [THREADS]   THREADS defaults to
 *                                     sysconf(_SC_NPROCESSORS_ONLN)
 *   pheat --serial ROWS COLS STEPS    the same sweeps in main, no thread:
 *                                     the reference checksum
 *
 * Two grids of (ROWS + 2) x COLS doubles, malloc'ed by main; the first
 * and last row and column are fixed boundaries.  Thread t owns interior
 * rows [1 + t*ROWS/T, 1 + (t+1)*ROWS/T): it initializes them (so they are
 * first touched where it runs, as a NUMA-aware program does), then every
 * sweep computes them in the new grid from its rows and the neighbours'
 * in the old one; a pthread_barrier ends each sweep.  Every cell is one
 * fixed expression of the old grid, so the result is bitwise the same for
 * any thread count.  Prints key=value lines: seconds (thread 0, from the
 * barrier after initialization to the barrier after the last sweep;
 * --serial: the sweeps), checksum (FNV-1a of the final grid's bytes),
 * threads, rows, cols, steps.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pbench.h"

#define MAX_THREADS	256

static size_t rows, cols, steps;
static double *grid[2];
static unsigned int nthreads;
static pthread_barrier_t sweep;
static double t0, t1;

static double initial(size_t i, size_t j)
{
	if (i == 0)
		return 100.0;
	if (i == rows + 1 || j == 0 || j == cols - 1)
		return 0.0;
	return (double)((i * 7 + j * 13) % 23) / 23.0;
}

/* Rows [r0, r1) of both grids (boundary rows included when in range). */
static void init_rows(size_t r0, size_t r1)
{
	size_t i, j;

	for (i = r0; i < r1; i++)
		for (j = 0; j < cols; j++)
			grid[0][i * cols + j] = grid[1][i * cols + j] =
				initial(i, j);
}

/* Interior rows [r0, r1) of @nw from @old. */
static void sweep_rows(const double *old, double *nw, size_t r0, size_t r1)
{
	size_t i, j;

	for (i = r0; i < r1; i++)
		for (j = 1; j < cols - 1; j++) {
			const double *o = old + i * cols + j;

			nw[i * cols + j] = o[0] + 0.125 *
				((o[-cols] + o[cols]) + (o[-1] + o[1]) -
				 4.0 * o[0]);
		}
}

static void *worker(void *arg)
{
	size_t t = (uintptr_t)arg, s;
	size_t r0 = 1 + t * rows / nthreads, r1 = 1 + (t + 1) * rows / nthreads;

	init_rows(t == 0 ? 0 : r0, t == nthreads - 1 ? rows + 2 : r1);
	pthread_barrier_wait(&sweep);
	if (t == 0)
		t0 = now();
	for (s = 0; s < steps; s++) {
		sweep_rows(grid[s & 1], grid[(s + 1) & 1], r0, r1);
		pthread_barrier_wait(&sweep);
	}
	if (t == 0)
		t1 = now();
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: pheat ROWS COLS STEPS [THREADS] | "
		"pheat --serial ROWS COLS STEPS\n");
	return 2;
}

int main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	int serial = argc > 1 && !strcmp(argv[1], "--serial");
	unsigned int t;
	long v;
	int err;

	if (argc < 4 + serial || argc > 5)
		return usage();
	rows = atol(argv[1 + serial]);
	cols = atol(argv[2 + serial]);
	steps = atol(argv[3 + serial]);
	if (rows < 1 || rows > 1 << 20 || cols < 3 || cols > 1 << 20 ||
	    steps > 1 << 24)
		return usage();
	if (serial) {
		nthreads = 0;
	} else if (argc == 5) {
		v = atol(argv[4]);
		if (v < 1 || v > MAX_THREADS)
			return usage();
		nthreads = v;
	} else {
		v = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = v < 1 ? 1 : v > MAX_THREADS ? MAX_THREADS : v;
	}
	if (nthreads > rows)
		nthreads = rows;
	grid[0] = malloc((rows + 2) * cols * sizeof(double));
	grid[1] = malloc((rows + 2) * cols * sizeof(double));
	if (!grid[0] || !grid[1]) {
		fprintf(stderr, "pheat: out of memory\n");
		return 1;
	}
	if (serial) {
		size_t s;

		init_rows(0, rows + 2);
		t0 = now();
		for (s = 0; s < steps; s++)
			sweep_rows(grid[s & 1], grid[(s + 1) & 1], 1, rows + 1);
		t1 = now();
	} else {
		err = pthread_barrier_init(&sweep, NULL, nthreads);
		for (t = 0; !err && t < nthreads; t++)
			err = pthread_create(&tid[t], NULL, worker,
					     (void *)(uintptr_t)t);
		if (err) {
			fprintf(stderr, "pheat: cannot start thread %u: %s\n",
				t, strerror(err));
			return 1;
		}
		for (t = 0; t < nthreads; t++)
			pthread_join(tid[t], NULL);
	}
	printf("seconds=%.6f\nchecksum=%016" PRIx64
	       "\nthreads=%u\nrows=%zu\ncols=%zu\nsteps=%zu\n", t1 - t0,
	       checksum(grid[steps & 1], (rows + 2) * cols), nthreads, rows,
	       cols, steps);
	return 0;
}
