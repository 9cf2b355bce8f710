// SPDX-License-Identifier: GPL-2.0
/*
 * bench_lib - raw /dev/sdsm helpers for the measurement programs.
 * See bench_lib.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_lib.h"

const char *bench_prog = "sdsm_bench";

static void bench_vmsg(int err, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", bench_prog);
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bench_vmsg(0, fmt, ap);
	va_end(ap);
	exit(BENCH_EXIT_FAIL);
}

void bench_die_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	bench_vmsg(err, fmt, ap);
	va_end(ap);
	exit(BENCH_EXIT_FAIL);
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

unsigned long bench_parse_ulong(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "%s: bad %s '%s'\n", bench_prog, what, s);
		exit(BENCH_EXIT_USAGE);
	}
	return v;
}

int bench_open_dev(void)
{
	int fd = open("/dev/sdsm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		bench_die_errno("open /dev/sdsm (is sdsm.ko loaded?)");
	return fd;
}

void bench_get_info(int fd, struct sdsm_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, SDSM_IOC_GET_INFO, info))
		bench_die_errno("SDSM_IOC_GET_INFO");
}

static const struct {
	uint64_t bit;
	const char *name;
} bench_features[] = {
	{ SDSM_FEATURE_PAGE_TRANSPORT, "PAGE_TRANSPORT" },
	{ SDSM_FEATURE_COHERENT_MEMORY, "COHERENT_MEMORY" },
	{ SDSM_FEATURE_REGIONS, "REGIONS" },
	{ SDSM_FEATURE_PLACEMENT, "PLACEMENT" },
	{ SDSM_FEATURE_LOCKS, "LOCKS" },
	{ SDSM_FEATURE_BARRIERS, "BARRIERS" },
	{ SDSM_FEATURE_FUTEX, "FUTEX" },
	{ SDSM_FEATURE_LOCK_THREADS, "LOCK_THREADS" },
	{ SDSM_FEATURE_BARRIER_SERIAL, "BARRIER_SERIAL" },
};

const char *bench_feature_name(uint64_t bit)
{
	size_t i;

	for (i = 0; i < sizeof(bench_features) / sizeof(bench_features[0]); i++)
		if (bench_features[i].bit == bit)
			return bench_features[i].name;
	return NULL;
}

uint64_t bench_feature_bit(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(bench_features) / sizeof(bench_features[0]); i++)
		if (!strcasecmp(bench_features[i].name, name))
			return bench_features[i].bit;
	return 0;
}

void bench_parse_policy(const char *s, struct sdsm_policy *pol)
{
	char mode[16];
	unsigned long a = 0, b = 0;
	int n;

	memset(pol, 0, sizeof(*pol));
	n = sscanf(s, "%15[a-z]:%li:%li", mode, &a, &b);
	if (n < 2)
		goto bad;
	if (!strcmp(mode, "bind") && n == 2 && a < 64) {
		pol->mode = SDSM_POLICY_BIND;
		pol->nodemask = 1ull << a;
	} else if (!strcmp(mode, "preferred") && n == 2 && a < 64) {
		pol->mode = SDSM_POLICY_PREFERRED;
		pol->preferred_node = a;
	} else if (!strcmp(mode, "interleave") && a) {
		pol->mode = SDSM_POLICY_INTERLEAVE;
		pol->nodemask = a;
		pol->block_size = b;
	} else {
		goto bad;
	}
	return;
bad:
	fprintf(stderr,
		"%s: bad policy '%s' (bind:NODE, preferred:NODE or interleave:MASK[:BLOCK])\n",
		bench_prog, s);
	exit(BENCH_EXIT_USAGE);
}

static void bench_set_name(struct bench_region *r, const char *name)
{
	if (strlen(name) >= sizeof(r->name))
		bench_die("region name '%s' too long", name);
	strcpy(r->name, name);
}

void bench_region_map(struct bench_region *r)
{
	r->addr = mmap(NULL, r->length, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->fd, (off_t)r->offset);
	if (r->addr == MAP_FAILED) {
		r->addr = NULL;
		bench_die_errno("mmap region %s (offset %#llx, %zu bytes)",
				r->name, (unsigned long long)r->offset,
				r->length);
	}
}

void bench_region_unmap(struct bench_region *r)
{
	if (r->addr && munmap(r->addr, r->length))
		bench_die_errno("munmap region %s", r->name);
	r->addr = NULL;
}

void bench_region_create(int fd, const char *name, size_t length,
			 const struct sdsm_policy *pol, struct bench_region *r)
{
	bench_region_create_flags(fd, name, length, pol, 0, r);
}

void bench_region_create_flags(int fd, const char *name, size_t length,
			       const struct sdsm_policy *pol, uint32_t flags,
			       struct bench_region *r)
{
	struct sdsm_region_create c;

	memset(r, 0, sizeof(*r));
	bench_set_name(r, name);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = SDSM_REGION_F_EXCL | flags;
	c.length = length;
	c.policy = *pol;
	strcpy(c.name, r->name);
	if (ioctl(fd, SDSM_IOC_REGION_CREATE, &c)) {
		if (errno == EOPNOTSUPP && flags) {
			fprintf(stderr, "%s: create region %s: the module does not support flags %#x\n",
				bench_prog, name, flags);
			exit(BENCH_EXIT_MISSING);
		}
		bench_die_errno("create region %s (%zu bytes)", name, length);
	}
	r->fd = fd;
	r->id = c.region_id;
	r->offset = c.offset;
	r->length = length;
}

void bench_region_open(int fd, const char *name, unsigned int timeout_s,
		       struct bench_region *r)
{
	uint64_t end = bench_now_ns() + timeout_s * 1000000000ull;
	struct sdsm_region_info info;

	memset(r, 0, sizeof(*r));
	bench_set_name(r, name);
	for (;;) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		strcpy(info.name, r->name);
		if (!ioctl(fd, SDSM_IOC_REGION_OPEN, &info))
			break;
		if (errno != ENOENT || bench_now_ns() > end)
			bench_die_errno("open region %s", name);
		usleep(50000);
	}
	r->fd = fd;
	r->id = info.region_id;
	r->offset = info.offset;
	r->length = info.length;
	r->consistency = info.consistency;
}

void bench_region_destroy(int fd, const char *name)
{
	struct bench_region r;
	struct sdsm_region_destroy d;

	bench_region_open(fd, name, 0, &r);
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.region_id = r.id;
	if (ioctl(fd, SDSM_IOC_REGION_DESTROY, &d))
		bench_die_errno("destroy region %s", name);
}

size_t bench_check_homes(struct bench_region *r, int home)
{
	return bench_check_homes_stride(r, home, 1);
}

size_t bench_check_homes_stride(struct bench_region *r, int home,
				size_t stride)
{
	size_t pages = (r->length / BENCH_PAGE + stride - 1) / stride;
	size_t i, done, bad = 0;
	uint64_t *addrs;
	int32_t *homes;

	addrs = calloc(4096, sizeof(*addrs));
	homes = calloc(4096, sizeof(*homes));
	if (!addrs || !homes)
		bench_die("out of memory");
	for (done = 0; done < pages; done += i) {
		struct sdsm_query_home q;
		size_t n = pages - done < 4096 ? pages - done : 4096;

		for (i = 0; i < n; i++)
			addrs[i] = (uintptr_t)r->addr +
				   (done + i) * stride * BENCH_PAGE;
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.count = n;
		q.addrs = (uintptr_t)addrs;
		q.homes = (uintptr_t)homes;
		if (ioctl(r->fd, SDSM_IOC_QUERY_HOME, &q))
			bench_die_errno("SDSM_IOC_QUERY_HOME on region %s",
					r->name);
		for (i = 0; i < n; i++) {
			if (homes[i] == home)
				continue;
			if (bad++ >= 4)
				continue;
			if (homes[i] < 0)
				fprintf(stderr,
					"%s: region %s page %zu: no home (%s), want node %d\n",
					bench_prog, r->name, (done + i) * stride,
					strerror(-homes[i]), home);
			else
				fprintf(stderr,
					"%s: region %s page %zu: home node %d, want node %d\n",
					bench_prog, r->name, (done + i) * stride,
					homes[i], home);
		}
	}
	free(addrs);
	free(homes);
	return bad;
}

void bench_barrier(int fd, uint64_t id, uint64_t nodemask,
		   unsigned int timeout_ms)
{
	struct sdsm_barrier b;

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.barrier_id = id;
	b.nodemask = nodemask;
	b.timeout_ms = timeout_ms;
	if (ioctl(fd, SDSM_IOC_BARRIER, &b))
		bench_die_errno("SDSM_IOC_BARRIER %#llx",
				(unsigned long long)id);
}

int bench_wait_file(const char *path, unsigned int timeout_s)
{
	uint64_t end = bench_now_ns() + timeout_s * 1000000000ull;
	struct stat st;

	while (stat(path, &st)) {
		if (bench_now_ns() > end)
			return -1;
		usleep(20000);
	}
	return 0;
}

void bench_create_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		bench_die_errno("create %s", path);
	close(fd);
}
