// SPDX-License-Identifier: GPL-2.0
/*
 * An unmodified OpenMP program of shim_tests.sh (plain gcc -fopenmp, no
 * sdsm header): its team is libgomp's default, which libgomp sizes in its
 * constructor from the CPUs it may run on (pthread_getaffinity_np()),
 * before libsdsm-preload.so's constructor runs.  A parallel loop with a
 * reduction, critical, atomic, barrier and single, ROUNDS times over an
 * array main() malloc'ed.  shim_omp_prog [ROUNDS [N]] (default 4, 4096).
 *
 * stdout holds only results, the same in a native run with
 * OMP_NUM_THREADS set to the team's size; stderr tells which node each
 * thread of the team ran on.  Exit status 1 if a result is wrong.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plain_node.h"

static long singles;

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	int n = argc > 2 ? atoi(argv[2]) : 4096;
	int team = omp_get_max_threads(), r, i;
	double *a = malloc(n * sizeof(*a)), dot = 0, want = 0;
	long crit = 0, atom = 0;

	if (!a || rounds < 1 || n < 1)
		return 2;
	for (i = 0; i < n; i++) {
		a[i] = i % 7;
		want += a[i] * a[i];
	}
	printf("team %d\n", team);
	fprintf(stderr, "procs %d\n", omp_get_num_procs());
	for (r = 0; r < rounds; r++) {
#pragma omp parallel
		{
			if (r == 0)
				fprintf(stderr, "thread %d on node %d tid %ld\n",
					omp_get_thread_num(), node_id(),
					(long)syscall(SYS_gettid));
#pragma omp for reduction(+:dot) schedule(static)
			for (i = 0; i < n; i++)
				dot += a[i] * a[i];
#pragma omp critical
			crit++;
#pragma omp atomic
			atom++;
#pragma omp barrier
#pragma omp single
			singles++;
		}
	}
	printf("dot %.0f critical %ld atomic %ld single %ld\n", dot, crit,
	       atom, singles);
	free(a);
	return dot == want * rounds && crit == (long)team * rounds &&
	       atom == crit && singles == rounds ? 0 : 1;
}
