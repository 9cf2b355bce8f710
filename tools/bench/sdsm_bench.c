// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_bench - the measurement steps of `make bench`, one subcommand each,
 * run inside the vcluster guests by tools/bench/guest.sh.
 *
 *   need FEATURE...             exit 0 if the module has every feature,
 *                               else print the missing ones and exit 3
 *   info                        GET_INFO as key=value lines
 *   create NAME PAGES POLICY    create a region (POLICY bind:N,
 *                               preferred:N, interleave:MASK[:BLOCK]);
 *                               print "offset=.. length=.. region_id=.."
 *   destroy NAME                destroy a region
 *   touch NAME read|write [--seed S] [--ready FILE] [--hold-until FILE]
 *         [--expect-after S2] [--timeout SEC] [--stride K]
 *                               access every page once (with --stride,
 *                               pages 0, K, 2K, ... only; write: the pattern
 *                               of seed S); then, with --hold-until, keep
 *                               the mapping (so this node stays a sharer)
 *                               until FILE exists, and with --expect-after
 *                               check that every page now holds the
 *                               pattern of S2 (the writer's)
 *   homes NAME NODE             fail unless every page's home is NODE
 *   fault NAME read|write --home NODE [--seed S] [--stride K]
 *                               check the homes, then time the first touch
 *                               of each page (or of pages 0, K, 2K, ...):
 *                               "page t0_ns t1_ns" lines
 *                               (CLOCK_MONOTONIC); read: check the values
 *   pingpong NAME ROLE ROUNDS [--home NODE] [--timeout SEC]
 *                               two nodes alternate writes to word 0 of the
 *                               region's first page, each waiting for the
 *                               other's value; ROLE 0 prints one line per
 *                               round trip: "round t0_ns t1_ns"; with
 *                               --home it first touches the page and
 *                               checks its home
 *
 * Exit status: 0 done, 1 measurement failed, 2 usage, 3 feature missing.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_lib.h"

static uint64_t bench_pattern(uint64_t seed, size_t page)
{
	return (seed + 1) * 0x9e3779b97f4a7c15ull ^ (page * 0xbf58476d1ce4e5b9ull);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: sdsm_bench need FEATURE... | info | create NAME PAGES POLICY |\n"
		"       destroy NAME | touch NAME read|write [options] |\n"
		"       homes NAME NODE |\n"
		"       fault NAME read|write --home NODE [--seed S] [--stride K] |\n"
		"       pingpong NAME ROLE ROUNDS [--timeout SEC]\n");
	return BENCH_EXIT_USAGE;
}

static int cmd_need(int argc, char **argv)
{
	struct sdsm_info info;
	int fd, i, missing = 0;

	if (argc < 2)
		return usage();
	fd = bench_open_dev();
	bench_get_info(fd, &info);
	for (i = 1; i < argc; i++) {
		uint64_t bit = bench_feature_bit(argv[i]);

		if (!bit) {
			fprintf(stderr, "%s: unknown feature %s\n", bench_prog,
				argv[i]);
			return BENCH_EXIT_USAGE;
		}
		if (!(info.features & bit)) {
			printf("%s%s", missing ? " " : "", argv[i]);
			missing++;
		}
	}
	if (missing)
		printf("\n");
	close(fd);
	return missing ? BENCH_EXIT_MISSING : 0;
}

static int cmd_info(void)
{
	struct sdsm_info info;
	int fd = bench_open_dev();
	uint64_t bit;

	bench_get_info(fd, &info);
	printf("api_version=%u\nnode_id=%u\nnr_nodes=%u\nfeatures=%#llx\n",
	       info.api_version, info.node_id, info.nr_nodes,
	       (unsigned long long)info.features);
	printf("feature_names=");
	for (bit = 1; bit; bit <<= 1) {
		const char *name = bench_feature_name(bit);

		if ((info.features & bit) && name)
			printf("%s ", name);
	}
	printf("\n");
	close(fd);
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	struct sdsm_policy pol;
	struct bench_region r;
	unsigned long pages;
	int fd;

	if (argc != 4)
		return usage();
	pages = bench_parse_ulong(argv[2], "page count");
	if (!pages)
		return usage();
	bench_parse_policy(argv[3], &pol);
	fd = bench_open_dev();
	bench_region_create(fd, argv[1], pages * BENCH_PAGE, &pol, &r);
	printf("offset=%llu length=%zu region_id=%u\n",
	       (unsigned long long)r.offset, r.length, r.id);
	close(fd);
	return 0;
}

static int cmd_destroy(int argc, char **argv)
{
	int fd;

	if (argc != 2)
		return usage();
	fd = bench_open_dev();
	bench_region_destroy(fd, argv[1]);
	close(fd);
	return 0;
}

static const struct option touch_opts[] = {
	{ "seed", required_argument, NULL, 's' },
	{ "ready", required_argument, NULL, 'r' },
	{ "hold-until", required_argument, NULL, 'h' },
	{ "expect-after", required_argument, NULL, 'e' },
	{ "timeout", required_argument, NULL, 't' },
	{ "home", required_argument, NULL, 'H' },
	{ "stride", required_argument, NULL, 'k' },
	{ NULL, 0, NULL, 0 }
};

struct bench_opts {
	uint64_t seed;
	uint64_t expect_seed;
	int expect;
	int home;
	size_t stride;
	const char *ready;
	const char *hold;
	unsigned int timeout_s;
};

static void parse_opts(int argc, char **argv, struct bench_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->home = -1;
	o->stride = 1;
	o->timeout_s = 120;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", touch_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->seed = bench_parse_ulong(optarg, "seed");
			break;
		case 'r':
			o->ready = optarg;
			break;
		case 'h':
			o->hold = optarg;
			break;
		case 'e':
			o->expect = 1;
			o->expect_seed = bench_parse_ulong(optarg, "seed");
			break;
		case 't':
			o->timeout_s = bench_parse_ulong(optarg, "timeout");
			break;
		case 'H':
			o->home = bench_parse_ulong(optarg, "node");
			break;
		case 'k':
			o->stride = bench_parse_ulong(optarg, "stride");
			if (!o->stride) {
				fprintf(stderr, "%s: --stride must be at least 1\n",
					bench_prog);
				exit(BENCH_EXIT_USAGE);
			}
			break;
		default:
			exit(usage());
		}
	}
}

static int parse_access(const char *s)
{
	if (!strcmp(s, "read"))
		return 0;
	if (!strcmp(s, "write"))
		return 1;
	fprintf(stderr, "%s: access must be read or write, not '%s'\n",
		bench_prog, s);
	exit(BENCH_EXIT_USAGE);
}

static size_t check_pattern(struct bench_region *r, uint64_t seed,
			    size_t stride)
{
	size_t pages = r->length / BENCH_PAGE, p, bad = 0;

	for (p = 0; p < pages; p += stride) {
		volatile uint64_t *w = (uint64_t *)((char *)r->addr +
						    p * BENCH_PAGE);
		uint64_t want = bench_pattern(seed, p), got = w[0];

		if (got == want)
			continue;
		if (bad++ < 4)
			fprintf(stderr,
				"%s: region %s page %zu holds %#llx, want %#llx\n",
				bench_prog, r->name, p,
				(unsigned long long)got,
				(unsigned long long)want);
	}
	return bad;
}

static int cmd_touch(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_region r;
	size_t pages, p;
	int fd, write;

	parse_opts(argc, argv, &o);
	if (argc - optind != 2)
		return usage();
	write = parse_access(argv[optind + 1]);
	fd = bench_open_dev();
	bench_region_open(fd, argv[optind], o.timeout_s, &r);
	bench_region_map(&r);
	pages = r.length / BENCH_PAGE;
	for (p = 0; p < pages; p += o.stride) {
		volatile uint64_t *w = (uint64_t *)((char *)r.addr +
						    p * BENCH_PAGE);

		if (write)
			w[0] = bench_pattern(o.seed, p);
		else
			(void)w[0];
	}
	if (o.ready)
		bench_create_file(o.ready);
	if (o.hold && bench_wait_file(o.hold, o.timeout_s))
		bench_die("%s did not appear in %us", o.hold, o.timeout_s);
	if (o.expect && check_pattern(&r, o.expect_seed, o.stride))
		bench_die("region %s: stale data after the writer's writes",
			  r.name);
	bench_region_unmap(&r);
	close(fd);
	return 0;
}

static int cmd_homes(int argc, char **argv)
{
	struct bench_region r;
	size_t bad;
	int fd, node;

	if (argc != 3)
		return usage();
	node = bench_parse_ulong(argv[2], "node");
	fd = bench_open_dev();
	bench_region_open(fd, argv[1], 0, &r);
	bench_region_map(&r);
	bad = bench_check_homes(&r, node);
	if (bad)
		bench_die("region %s: %zu of %zu pages not homed on node %d",
			  r.name, bad, r.length / BENCH_PAGE, node);
	bench_region_unmap(&r);
	close(fd);
	return 0;
}

static int cmd_fault(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_region r;
	uint64_t *t0, *t1, *vals;
	size_t n, i, bad;
	int fd, write;

	parse_opts(argc, argv, &o);
	if (argc - optind != 2 || o.home < 0)
		return usage();
	write = parse_access(argv[optind + 1]);
	fd = bench_open_dev();
	bench_region_open(fd, argv[optind], 0, &r);
	bench_region_map(&r);
	/* Pages 0, stride, 2 * stride, ...: n of them. */
	n = (r.length / BENCH_PAGE + o.stride - 1) / o.stride;
	bad = bench_check_homes_stride(&r, o.home, o.stride);
	if (bad)
		bench_die("region %s: %zu of %zu pages not homed on node %d; not measuring",
			  r.name, bad, n, o.home);
	t0 = calloc(n, sizeof(*t0));
	t1 = calloc(n, sizeof(*t1));
	vals = calloc(n, sizeof(*vals));
	if (!t0 || !t1 || !vals)
		bench_die("out of memory");

	for (i = 0; i < n; i++) {
		size_t p = i * o.stride;
		volatile uint64_t *w = (uint64_t *)((char *)r.addr +
						    p * BENCH_PAGE);
		uint64_t v = bench_pattern(o.seed, p);

		t0[i] = bench_now_ns();
		if (write)
			w[0] = v;
		else
			v = w[0];
		t1[i] = bench_now_ns();
		vals[i] = v;
	}

	if (!write) {
		for (i = 0, bad = 0; i < n; i++) {
			size_t p = i * o.stride;

			if (vals[i] != bench_pattern(o.seed, p) && bad++ < 4)
				fprintf(stderr,
					"%s: region %s page %zu read %#llx, want %#llx\n",
					bench_prog, r.name, p,
					(unsigned long long)vals[i],
					(unsigned long long)bench_pattern(o.seed, p));
		}
		if (bad)
			bench_die("region %s: %zu pages read wrong data",
				  r.name, bad);
	}
	printf("# fault %s region=%s pages=%zu stride=%zu home=%d\n",
	       write ? "write" : "read", r.name, n, o.stride, o.home);
	for (i = 0; i < n; i++)
		printf("%zu %llu %llu\n", i * o.stride,
		       (unsigned long long)t0[i], (unsigned long long)t1[i]);
	free(t0);
	free(t1);
	free(vals);
	bench_region_unmap(&r);
	close(fd);
	return 0;
}

static void pp_wait(volatile uint64_t *w, uint64_t want, uint64_t deadline)
{
	unsigned int spins = 0;
	uint64_t v;

	while ((v = *w) != want) {
		if (v > want)
			bench_die("ping-pong: saw %llu while waiting for %llu",
				  (unsigned long long)v,
				  (unsigned long long)want);
		if (!(++spins & 255) && bench_now_ns() > deadline)
			bench_die("ping-pong: no %llu within the timeout (last %llu)",
				  (unsigned long long)want,
				  (unsigned long long)v);
		sched_yield();
	}
}

static int cmd_pingpong(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_region r;
	volatile uint64_t *w;
	unsigned long rounds, i;
	uint64_t *t0, *t1, tmo;
	int fd, role;

	parse_opts(argc, argv, &o);
	if (argc - optind != 3)
		return usage();
	role = bench_parse_ulong(argv[optind + 1], "role");
	rounds = bench_parse_ulong(argv[optind + 2], "rounds");
	if (role > 1 || !rounds)
		return usage();
	fd = bench_open_dev();
	bench_region_open(fd, argv[optind], o.timeout_s, &r);
	bench_region_map(&r);
	w = r.addr;
	tmo = o.timeout_s * 1000000000ull;
	t0 = calloc(rounds, sizeof(*t0));
	t1 = calloc(rounds, sizeof(*t1));
	if (!t0 || !t1)
		bench_die("out of memory");

	if (role == 0 && o.home >= 0) {
		/* The first touch fixes the home; the peer waits for 1. */
		*w = 0;
		if (bench_check_homes(&r, o.home))
			bench_die("region %s: page not homed on node %d; not measuring",
				  r.name, o.home);
	}
	for (i = 0; i < rounds; i++) {
		if (role == 0) {
			t0[i] = bench_now_ns();
			*w = 2 * i + 1;
			pp_wait(w, 2 * i + 2, t0[i] + tmo);
			t1[i] = bench_now_ns();
		} else {
			pp_wait(w, 2 * i + 1, bench_now_ns() + tmo);
			*w = 2 * i + 2;
		}
	}
	if (role == 0) {
		printf("# pingpong region=%s rounds=%lu\n", r.name, rounds);
		for (i = 0; i < rounds; i++)
			printf("%lu %llu %llu\n", i,
			       (unsigned long long)t0[i],
			       (unsigned long long)t1[i]);
	}
	free(t0);
	free(t1);
	bench_region_unmap(&r);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		return usage();
	cmd = argv[1];
	argc--;
	argv++;
	if (!strcmp(cmd, "need"))
		return cmd_need(argc, argv);
	if (!strcmp(cmd, "info"))
		return cmd_info();
	if (!strcmp(cmd, "create"))
		return cmd_create(argc, argv);
	if (!strcmp(cmd, "destroy"))
		return cmd_destroy(argc, argv);
	if (!strcmp(cmd, "touch"))
		return cmd_touch(argc, argv);
	if (!strcmp(cmd, "homes"))
		return cmd_homes(argc, argv);
	if (!strcmp(cmd, "fault"))
		return cmd_fault(argc, argv);
	if (!strcmp(cmd, "pingpong"))
		return cmd_pingpong(argc, argv);
	return usage();
}
