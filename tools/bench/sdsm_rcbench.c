// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_rcbench - the release-consistency figures of `make bench` (issue
 * 12): false sharing on a sequential and on a release region, and a Jacobi
 * stencil on a release region on 1 and on 2 nodes.
 *
 *   sdsm_rcbench fs-setup NAME seq|release PAGES NODES
 *	create region NAME of PAGES pages (release-consistent with
 *	"release"), its pages interleaved one by one over nodes
 *	0..NODES-1
 *   sdsm_rcbench fs-work NAME seq|release PAGES NODES W K PHASES
 *		[--verify] [--timeout SEC]
 *	worker W (run on node W) owns the 64-bit words i of the region with
 *	i % NODES == W, interleaved with every other worker's in the same
 *	pages.  After a first barrier it runs PHASES phases, each K passes
 *	over its words (each pass one step w = w * A + c of every word, a
 *	per-word counter) then a barrier.  Worker 0 prints "seconds=..."
 *	(first barrier to last) and, with --verify, checks every word of
 *	every worker against the same steps run here serially; it prints
 *	"checksum=..." (FNV-1a of the words) either way.
 *   sdsm_rcbench jacobi-setup PREFIX N WORKERS
 *	create release regions PREFIX-a and PREFIX-b (N x N doubles each),
 *	interleaved over nodes 0..WORKERS-1 in blocks of N/WORKERS rows,
 *	so each worker's rows are homed where it computes them
 *   sdsm_rcbench jacobi-work PREFIX N WORKERS W ITERS [--verify]
 *		[--timeout SEC]
 *	worker W (run on node W) initializes its rows of both grids, meets
 *	the others at a barrier, then runs ITERS Jacobi sweeps (5-point
 *	average of the interior, from one grid into the other), a barrier
 *	after each.  Worker 0 prints "seconds=..." (first barrier to last)
 *	and, with --verify, runs the same sweeps here in private memory and
 *	fails unless the result is bitwise equal; "checksum=..." either way.
 *
 * Worker 0 also prints "consistency=sequential|release", read back from
 * the region.  Every worker W prints "workerW_work_seconds=" (its own
 * loop) and "workerW_barrier_seconds=" (the barriers after the phases or
 * sweeps) of the timed part.  The barriers are SDSM_IOC_BARRIER over the workers' nodes,
 * with ids derived from NAME or PREFIX.  In a release region a barrier is
 * the release (arrival) and the acquire (departure) that make the other
 * workers' writes visible; nothing else is needed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_lib.h"

#define FS_MUL		6364136223846793005ull

static uint64_t rc_hash(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t rc_barrier_id(const char *name, unsigned int which)
{
	return rc_hash(name, strlen(name)) ^ ((uint64_t)which << 56) ^ 0x12;
}

static uint64_t rc_mask(unsigned int nodes)
{
	return nodes >= 64 ? ~0ull : (1ull << nodes) - 1;
}

static int rc_parse_mode(const char *s)
{
	if (!strcmp(s, "seq"))
		return 0;
	if (!strcmp(s, "release"))
		return 1;
	bench_die("mode must be seq or release, not '%s'", s);
}

/*
 * Where worker W's timed part went: in its own loop (computing, faulting,
 * making twins) or in the barriers after each phase (waiting for the
 * others, sending diffs, invalidating); on stdout.
 */
static void rc_print_split(unsigned int w, uint64_t total, uint64_t waited)
{
	printf("worker%u_work_seconds=%.6f\nworker%u_barrier_seconds=%.6f\n",
	       w, (total - waited) / 1e9, w, waited / 1e9);
}

/* The end-of-phase barrier of the workers; its time added to *@waited. */
static void rc_phase_barrier(int fd, const char *name, uint64_t mask,
			     unsigned int timeout_s, uint64_t *waited)
{
	uint64_t tb = bench_now_ns();

	bench_barrier(fd, rc_barrier_id(name, 2), mask, timeout_s * 1000);
	*waited += bench_now_ns() - tb;
}

static const struct option work_opts[] = {
	{ "verify", no_argument, NULL, 'v' },
	{ "timeout", required_argument, NULL, 't' },
	{ NULL, 0, NULL, 0 }
};

/* Parse --verify and --timeout; the positional arguments start at optind. */
static int rc_work_opts(int argc, char **argv, int *verify,
			unsigned int *timeout_s)
{
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", work_opts, NULL)) != -1) {
		if (opt == 'v')
			*verify = 1;
		else if (opt == 't')
			*timeout_s = bench_parse_ulong(optarg, "timeout");
		else
			return -1;
	}
	return 0;
}

/* ---- false sharing ------------------------------------------------------ */

static void fs_check(size_t pages, unsigned int nodes)
{
	if (!pages || pages > 1024)
		bench_die("PAGES must be 1..1024");
	if (nodes < 1 || nodes > 64)
		bench_die("NODES must be 1..64");
}

/* The additive constant of word i's step in phase r. */
static uint64_t fs_add(size_t i, unsigned long r)
{
	return (i + 1) * 0x9e3779b97f4a7c15ull + 2 * r + 1;
}

static int cmd_fs_setup(int argc, char **argv)
{
	struct sdsm_policy pol;
	struct bench_region r;
	unsigned int nodes;
	size_t pages;
	int fd, rel;

	if (argc != 5)
		return BENCH_EXIT_USAGE;
	rel = rc_parse_mode(argv[2]);
	pages = bench_parse_ulong(argv[3], "pages");
	nodes = bench_parse_ulong(argv[4], "nodes");
	fs_check(pages, nodes);
	fd = bench_open_dev();
	memset(&pol, 0, sizeof(pol));
	pol.mode = SDSM_POLICY_INTERLEAVE;
	pol.nodemask = rc_mask(nodes);
	pol.block_size = BENCH_PAGE;
	bench_region_create_flags(fd, argv[1], pages * BENCH_PAGE, &pol,
				  rel ? SDSM_REGION_F_RELEASE : 0, &r);
	close(fd);
	return 0;
}

static int cmd_fs_work(int argc, char **argv)
{
	unsigned int nodes, w, timeout_s = 120;
	unsigned long k, kk, phases, ph;
	size_t pages, words, i, bad = 0;
	struct bench_region r;
	volatile uint64_t *p;
	uint64_t mask, t0, t1, waited = 0, *ref;
	const char *name;
	int fd, rel, verify = 0;

	if (rc_work_opts(argc, argv, &verify, &timeout_s) ||
	    argc - optind != 7)
		return BENCH_EXIT_USAGE;
	argv += optind;
	name = argv[0];
	rel = rc_parse_mode(argv[1]);
	pages = bench_parse_ulong(argv[2], "pages");
	nodes = bench_parse_ulong(argv[3], "nodes");
	w = bench_parse_ulong(argv[4], "worker");
	k = bench_parse_ulong(argv[5], "K");
	phases = bench_parse_ulong(argv[6], "phases");
	fs_check(pages, nodes);
	if (w >= nodes || !k || !phases)
		bench_die("worker %u of %u, K %lu, phases %lu", w, nodes, k,
			  phases);
	words = pages * BENCH_PAGE / sizeof(uint64_t);
	mask = rc_mask(nodes);

	fd = bench_open_dev();
	bench_region_open(fd, name, timeout_s, &r);
	if (r.length != pages * BENCH_PAGE)
		bench_die("region %s is not %zu pages", name, pages);
	if (r.consistency != (rel ? SDSM_CONSISTENCY_RELEASE :
			      SDSM_CONSISTENCY_SEQUENTIAL))
		bench_die("region %s has consistency %u, not %s", name,
			  r.consistency, argv[1]);
	bench_region_map(&r);
	p = r.addr;

	bench_barrier(fd, rc_barrier_id(name, 1), mask, timeout_s * 1000);
	t0 = bench_now_ns();
	for (ph = 0; ph < phases; ph++) {
		for (kk = 0; kk < k; kk++)
			for (i = w; i < words; i += nodes)
				p[i] = p[i] * FS_MUL + fs_add(i, ph);
		rc_phase_barrier(fd, name, mask, timeout_s, &waited);
	}
	t1 = bench_now_ns();
	rc_print_split(w, t1 - t0, waited);
	if (w != 0)
		goto out;

	printf("seconds=%.6f\n", (t1 - t0) / 1e9);
	printf("consistency=%s\n", rel ? "release" : "sequential");
	ref = calloc(words, sizeof(*ref));
	if (!ref)
		bench_die("out of memory");
	for (i = 0; i < words; i++)
		ref[i] = p[i];
	if (verify) {
		for (i = 0; i < words; i++) {
			uint64_t v = 0;

			for (ph = 0; ph < phases; ph++)
				for (kk = 0; kk < k; kk++)
					v = v * FS_MUL + fs_add(i, ph);
			if (v != ref[i] && bad++ < 4)
				fprintf(stderr,
					"%s: word %zu (node %zu's) = %#llx, want %#llx\n",
					bench_prog, i, i % nodes,
					(unsigned long long)ref[i],
					(unsigned long long)v);
		}
		if (bad)
			bench_die("%zu of %zu words are wrong", bad, words);
		printf("verified=1\n");
	}
	printf("checksum=%016llx\n",
	       (unsigned long long)rc_hash(ref, words * sizeof(*ref)));
	free(ref);
out:
	bench_region_unmap(&r);
	close(fd);
	return 0;
}

/* ---- Jacobi ------------------------------------------------------------- */

/* The initial grid: fixed boundary values, a pattern inside. */
static double jc_init(size_t i, size_t j, size_t n)
{
	if (i == 0)
		return 1.0;
	if (i == n - 1)
		return -0.5;
	if (j == 0)
		return (double)i / (double)n;
	if (j == n - 1)
		return 0.25;
	return (double)((i * 7 + j * 3) % 17) / 16.0;
}

static void jc_init_rows(double *g, size_t n, size_t r0, size_t r1)
{
	size_t i, j;

	for (i = r0; i < r1; i++)
		for (j = 0; j < n; j++)
			g[i * n + j] = jc_init(i, j, n);
}

/* One sweep of rows [r0, r1) (clipped to the interior) from src to dst. */
static void jc_sweep(const double *src, double *dst, size_t n, size_t r0,
		     size_t r1)
{
	size_t i, j;

	if (r0 < 1)
		r0 = 1;
	if (r1 > n - 1)
		r1 = n - 1;
	for (i = r0; i < r1; i++) {
		const double *up = src + (i - 1) * n, *mid = src + i * n;
		const double *down = src + (i + 1) * n;
		double *out = dst + i * n;

		for (j = 1; j < n - 1; j++)
			out[j] = 0.25 * ((up[j] + down[j]) +
					 (mid[j - 1] + mid[j + 1]));
	}
}

static void jc_check(size_t n, unsigned int workers)
{
	if (n < 4 || n > 8192)
		bench_die("N must be 4..8192");
	if (!workers || workers > 64 || n % workers ||
	    (n / workers) * n * sizeof(double) % BENCH_PAGE)
		bench_die("N=%zu rows do not split into %u page-aligned parts",
			  n, workers);
}

static void jc_name(char *buf, const char *prefix, char which)
{
	if (strlen(prefix) + 3 > SDSM_NAME_MAX - 1)
		bench_die("prefix '%s' too long", prefix);
	sprintf(buf, "%s-%c", prefix, which);
}

static int cmd_jacobi_setup(int argc, char **argv)
{
	struct sdsm_policy pol;
	struct bench_region g;
	char name[SDSM_NAME_MAX];
	unsigned int workers;
	size_t n, bytes;
	int fd;

	if (argc != 4)
		return BENCH_EXIT_USAGE;
	n = bench_parse_ulong(argv[2], "N");
	workers = bench_parse_ulong(argv[3], "workers");
	jc_check(n, workers);
	bytes = n * n * sizeof(double);
	fd = bench_open_dev();
	memset(&pol, 0, sizeof(pol));
	pol.mode = SDSM_POLICY_INTERLEAVE;
	pol.nodemask = rc_mask(workers);
	pol.block_size = bytes / workers;
	jc_name(name, argv[1], 'a');
	bench_region_create_flags(fd, name, bytes, &pol,
				  SDSM_REGION_F_RELEASE, &g);
	jc_name(name, argv[1], 'b');
	bench_region_create_flags(fd, name, bytes, &pol,
				  SDSM_REGION_F_RELEASE, &g);
	close(fd);
	return 0;
}

static int cmd_jacobi_work(int argc, char **argv)
{
	unsigned int workers, w, timeout_s = 300;
	unsigned long iters, t;
	size_t n, rows, i, bad = 0;
	struct bench_region g[2], mine;
	char name[SDSM_NAME_MAX];
	uint64_t mask, t0, t1, waited = 0, sum;
	double *res;
	int fd, verify = 0;

	if (rc_work_opts(argc, argv, &verify, &timeout_s) ||
	    argc - optind != 5)
		return BENCH_EXIT_USAGE;
	argv += optind;
	n = bench_parse_ulong(argv[1], "N");
	workers = bench_parse_ulong(argv[2], "workers");
	w = bench_parse_ulong(argv[3], "worker");
	iters = bench_parse_ulong(argv[4], "iterations");
	jc_check(n, workers);
	if (w >= workers || !iters)
		bench_die("worker %u of %u, %lu iterations", w, workers, iters);
	rows = n / workers;
	mask = rc_mask(workers);

	fd = bench_open_dev();
	for (i = 0; i < 2; i++) {
		jc_name(name, argv[0], "ab"[i]);
		bench_region_open(fd, name, timeout_s, &g[i]);
		if (g[i].length != n * n * sizeof(double))
			bench_die("region %s is not %zu x %zu doubles", name,
				  n, n);
		if (g[i].consistency != SDSM_CONSISTENCY_RELEASE)
			bench_die("region %s is not release-consistent", name);
		bench_region_map(&g[i]);
		/* This worker's rows are homed on its node, node W. */
		mine = g[i];
		mine.addr = (char *)g[i].addr + w * rows * n * sizeof(double);
		mine.length = rows * n * sizeof(double);
		if (bench_check_homes(&mine, w))
			bench_die("rows of worker %u in %s not homed on node %u",
				  w, name, w);
	}
	jc_init_rows(g[0].addr, n, w * rows, (w + 1) * rows);
	jc_init_rows(g[1].addr, n, w * rows, (w + 1) * rows);

	bench_barrier(fd, rc_barrier_id(argv[0], 1), mask, timeout_s * 1000);
	t0 = bench_now_ns();
	for (t = 0; t < iters; t++) {
		jc_sweep(g[t % 2].addr, g[(t + 1) % 2].addr, n, w * rows,
			 (w + 1) * rows);
		rc_phase_barrier(fd, argv[0], mask, timeout_s, &waited);
	}
	t1 = bench_now_ns();
	rc_print_split(w, t1 - t0, waited);
	if (w != 0)
		goto out;

	res = g[iters % 2].addr;
	printf("seconds=%.6f\n", (t1 - t0) / 1e9);
	printf("consistency=release\n");
	printf("n=%zu\niterations=%lu\n", n, iters);
	sum = rc_hash(res, n * n * sizeof(double));
	if (verify) {
		double *ref[2];

		ref[0] = malloc(n * n * sizeof(double));
		ref[1] = malloc(n * n * sizeof(double));
		if (!ref[0] || !ref[1])
			bench_die("out of memory");
		jc_init_rows(ref[0], n, 0, n);
		jc_init_rows(ref[1], n, 0, n);
		for (t = 0; t < iters; t++)
			jc_sweep(ref[t % 2], ref[(t + 1) % 2], n, 0, n);
		for (i = 0; i < n * n; i++)
			if (memcmp(&ref[iters % 2][i], &res[i],
				   sizeof(double)) && bad++ < 4)
				fprintf(stderr,
					"%s: grid[%zu][%zu] = %.17g, want %.17g\n",
					bench_prog, i / n, i % n, res[i],
					ref[iters % 2][i]);
		if (bad)
			bench_die("%zu of %zu cells are wrong", bad, n * n);
		if (rc_hash(ref[iters % 2], n * n * sizeof(double)) != sum)
			bench_die("checksum differs from the reference");
		free(ref[0]);
		free(ref[1]);
		printf("verified=1\n");
	}
	printf("checksum=%016llx\n", (unsigned long long)sum);
out:
	bench_region_unmap(&g[0]);
	bench_region_unmap(&g[1]);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "fs-setup", cmd_fs_setup },
		{ "fs-work", cmd_fs_work },
		{ "jacobi-setup", cmd_jacobi_setup },
		{ "jacobi-work", cmd_jacobi_work },
	};
	size_t c;
	int rc;

	bench_prog = "sdsm_rcbench";
	for (c = 0; argc >= 2 && c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		if (strcmp(argv[1], cmds[c].name))
			continue;
		rc = cmds[c].fn(argc - 1, argv + 1);
		if (rc != BENCH_EXIT_USAGE)
			return rc;
		break;
	}
	fprintf(stderr,
		"usage: sdsm_rcbench fs-setup NAME seq|release PAGES NODES\n"
		"       sdsm_rcbench fs-work NAME seq|release PAGES NODES W K PHASES\n"
		"                    [--verify] [--timeout SEC]\n"
		"       sdsm_rcbench jacobi-setup PREFIX N WORKERS\n"
		"       sdsm_rcbench jacobi-work PREFIX N WORKERS W ITERS\n"
		"                    [--verify] [--timeout SEC]\n");
	return BENCH_EXIT_USAGE;
}
