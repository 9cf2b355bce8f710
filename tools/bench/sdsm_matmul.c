// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_matmul - blocked double-precision C = A x B in sdsm memory, for the
 * 1-node vs 2-node speedup figure of `make bench`.
 *
 *   sdsm_matmul setup PREFIX N WORKERS
 *	create regions PREFIX-a and PREFIX-b (N x N doubles, bound to node 0)
 *	and PREFIX-c (interleaved over nodes 0..WORKERS-1 in blocks of
 *	N/WORKERS rows, so each worker's rows of C are homed where it runs),
 *	fill A and B, check the homes
 *   sdsm_matmul work PREFIX N WORKERS W [--verify] [--timeout SEC]
 *	worker W (run on node W) opens the regions, meets the others at a
 *	cluster barrier, computes rows [W*N/WORKERS, (W+1)*N/WORKERS) of C,
 *	meets them again.  Worker 0 prints "seconds=..." (barrier to barrier)
 *	and, with --verify, computes C locally with the same kernel and the
 *	same summation order and fails unless the two are bitwise equal;
 *	it prints "checksum=..." (FNV-1a of C's bytes) either way.
 *
 * The barriers are SDSM_IOC_BARRIER over nodes 0..WORKERS-1; their id is
 * derived from PREFIX so concurrent runs with other prefixes do not mix.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_lib.h"

#define MM_BLOCK	32

static double mm_a(size_t i, size_t k)
{
	return (double)((int)((i * 13 + k * 7) % 31) - 15) / 16.0;
}

static double mm_b(size_t k, size_t j)
{
	return (double)((int)((k * 5 + j * 11) % 29) - 14) / 8.0;
}

/* Rows [r0, r1) of c = a x b, blocked; c must start zeroed. */
static void mm_kernel(const double *a, const double *b, double *c, size_t n,
		      size_t r0, size_t r1)
{
	size_t ii, kk, jj, i, k, j;

	for (ii = r0; ii < r1; ii += MM_BLOCK)
		for (kk = 0; kk < n; kk += MM_BLOCK)
			for (jj = 0; jj < n; jj += MM_BLOCK)
				for (i = ii; i < ii + MM_BLOCK && i < r1; i++)
					for (k = kk; k < kk + MM_BLOCK && k < n; k++) {
						double aik = a[i * n + k];

						for (j = jj; j < jj + MM_BLOCK && j < n; j++)
							c[i * n + j] += aik * b[k * n + j];
					}
}

static uint64_t mm_checksum(const double *c, size_t n)
{
	const unsigned char *p = (const unsigned char *)c;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n * n * sizeof(double); i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t mm_barrier_id(const char *prefix, unsigned int which)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*prefix) {
		h ^= (unsigned char)*prefix++;
		h *= 0x100000001b3ull;
	}
	return h ^ which;
}

static void mm_name(char *buf, const char *prefix, char which)
{
	if (strlen(prefix) + 3 > SDSM_NAME_MAX - 1)
		bench_die("prefix '%s' too long", prefix);
	sprintf(buf, "%s-%c", prefix, which);
}

static void mm_check_size(size_t n, unsigned int workers)
{
	if (!n || n % MM_BLOCK)
		bench_die("N must be a non-zero multiple of %d", MM_BLOCK);
	if (!workers || workers > 64 || n % workers ||
	    (n / workers) * n * sizeof(double) % BENCH_PAGE)
		bench_die("N=%zu rows do not split into %u page-aligned parts",
			  n, workers);
}

static int cmd_setup(int argc, char **argv)
{
	struct sdsm_policy pol;
	struct bench_region a, b, c;
	size_t n, bytes, i, k;
	unsigned int workers;
	char name[SDSM_NAME_MAX];
	int fd;

	if (argc != 4)
		return BENCH_EXIT_USAGE;
	n = bench_parse_ulong(argv[2], "N");
	workers = bench_parse_ulong(argv[3], "workers");
	mm_check_size(n, workers);
	bytes = n * n * sizeof(double);
	fd = bench_open_dev();

	memset(&pol, 0, sizeof(pol));
	pol.mode = SDSM_POLICY_BIND;
	pol.nodemask = 1;
	mm_name(name, argv[1], 'a');
	bench_region_create(fd, name, bytes, &pol, &a);
	mm_name(name, argv[1], 'b');
	bench_region_create(fd, name, bytes, &pol, &b);
	pol.mode = SDSM_POLICY_INTERLEAVE;
	pol.nodemask = (workers == 64) ? ~0ull : (1ull << workers) - 1;
	pol.block_size = bytes / workers;
	mm_name(name, argv[1], 'c');
	bench_region_create(fd, name, bytes, &pol, &c);

	bench_region_map(&a);
	bench_region_map(&b);
	for (i = 0; i < n; i++)
		for (k = 0; k < n; k++) {
			((double *)a.addr)[i * n + k] = mm_a(i, k);
			((double *)b.addr)[i * n + k] = mm_b(i, k);
		}
	if (bench_check_homes(&a, 0) || bench_check_homes(&b, 0))
		bench_die("A or B not homed on node 0");
	bench_region_unmap(&a);
	bench_region_unmap(&b);
	close(fd);
	return 0;
}

static const struct option work_opts[] = {
	{ "verify", no_argument, NULL, 'v' },
	{ "timeout", required_argument, NULL, 't' },
	{ NULL, 0, NULL, 0 }
};

static int cmd_work(int argc, char **argv)
{
	struct bench_region a, b, c;
	unsigned int workers, w, timeout_s = 300;
	size_t n, rows, i, bad;
	uint64_t mask, t0, t1, sum;
	char name[SDSM_NAME_MAX];
	int fd, opt, verify = 0;
	double *ref;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", work_opts, NULL)) != -1) {
		if (opt == 'v')
			verify = 1;
		else if (opt == 't')
			timeout_s = bench_parse_ulong(optarg, "timeout");
		else
			return BENCH_EXIT_USAGE;
	}
	if (argc - optind != 4)
		return BENCH_EXIT_USAGE;
	n = bench_parse_ulong(argv[optind + 1], "N");
	workers = bench_parse_ulong(argv[optind + 2], "workers");
	w = bench_parse_ulong(argv[optind + 3], "worker");
	mm_check_size(n, workers);
	if (w >= workers)
		bench_die("worker %u of %u", w, workers);
	rows = n / workers;
	mask = (workers == 64) ? ~0ull : (1ull << workers) - 1;

	fd = bench_open_dev();
	mm_name(name, argv[optind], 'a');
	bench_region_open(fd, name, timeout_s, &a);
	mm_name(name, argv[optind], 'b');
	bench_region_open(fd, name, timeout_s, &b);
	mm_name(name, argv[optind], 'c');
	bench_region_open(fd, name, timeout_s, &c);
	if (a.length != n * n * sizeof(double) || c.length != a.length)
		bench_die("regions of %s are not %zu x %zu doubles",
			  argv[optind], n, n);
	bench_region_map(&a);
	bench_region_map(&b);
	bench_region_map(&c);

	bench_barrier(fd, mm_barrier_id(argv[optind], 1), mask,
		      timeout_s * 1000);
	t0 = bench_now_ns();
	mm_kernel(a.addr, b.addr, c.addr, n, w * rows, (w + 1) * rows);
	bench_barrier(fd, mm_barrier_id(argv[optind], 2), mask,
		      timeout_s * 1000);
	t1 = bench_now_ns();
	if (w != 0)
		goto out;

	printf("seconds=%.6f\n", (t1 - t0) / 1e9);
	sum = mm_checksum(c.addr, n);
	if (verify) {
		double *la, *lb;
		size_t k;

		ref = calloc(n * n, sizeof(*ref));
		la = malloc(n * n * sizeof(*la));
		lb = malloc(n * n * sizeof(*lb));
		if (!ref || !la || !lb)
			bench_die("out of memory");
		for (i = 0; i < n; i++)
			for (k = 0; k < n; k++) {
				la[i * n + k] = mm_a(i, k);
				lb[i * n + k] = mm_b(i, k);
			}
		mm_kernel(la, lb, ref, n, 0, n);
		free(la);
		free(lb);
		for (i = 0, bad = 0; i < n * n; i++)
			if (memcmp(&ref[i], &((double *)c.addr)[i],
				   sizeof(double)) && bad++ < 4)
				fprintf(stderr,
					"%s: C[%zu][%zu] = %g, want %g\n",
					bench_prog, i / n, i % n,
					((double *)c.addr)[i], ref[i]);
		if (bad)
			bench_die("%zu of %zu elements of C are wrong", bad,
				  n * n);
		if (mm_checksum(ref, n) != sum)
			bench_die("checksum differs from the reference");
		free(ref);
		printf("verified=1\n");
	}
	printf("checksum=%016llx\n", (unsigned long long)sum);
out:
	bench_region_unmap(&a);
	bench_region_unmap(&b);
	bench_region_unmap(&c);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	bench_prog = "sdsm_matmul";
	if (argc >= 2 && !strcmp(argv[1], "setup"))
		return cmd_setup(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "work"))
		return cmd_work(argc - 1, argv + 1);
	fprintf(stderr,
		"usage: sdsm_matmul setup PREFIX N WORKERS\n"
		"       sdsm_matmul work PREFIX N WORKERS W [--verify] [--timeout SEC]\n");
	return BENCH_EXIT_USAGE;
}
