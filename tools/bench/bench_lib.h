/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_lib - what the sdsm measurement programs share: the raw /dev/sdsm
 * calls (regions, placement checks, barriers), time, and error exits.
 *
 * The programs use the uapi directly, not libsdsm, so a figure measures the
 * module and nothing in between.  Every failure is fatal: a figure measured
 * on a half-working setup (wrong home, missing page) must not be reported.
 */
#ifndef BENCH_LIB_H
#define BENCH_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <linux/sdsm.h>

#define BENCH_PAGE	4096UL

/* Exit codes the guest driver understands. */
#define BENCH_EXIT_FAIL		1	/* the measurement failed */
#define BENCH_EXIT_USAGE	2
#define BENCH_EXIT_MISSING	3	/* the module lacks a needed feature */

struct bench_region {
	int fd;
	void *addr;
	size_t length;
	uint64_t offset;
	uint32_t id;
	uint32_t consistency;	/* enum sdsm_consistency, after open */
	char name[SDSM_NAME_MAX];
};

extern const char *bench_prog;

void bench_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void bench_die_errno(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

uint64_t bench_now_ns(void);
unsigned long bench_parse_ulong(const char *s, const char *what);

int bench_open_dev(void);
void bench_get_info(int fd, struct sdsm_info *info);
const char *bench_feature_name(uint64_t bit);
uint64_t bench_feature_bit(const char *name);

/* Policy from "bind:N", "preferred:N", "interleave:MASK[:BLOCK]". */
void bench_parse_policy(const char *s, struct sdsm_policy *pol);

void bench_region_create(int fd, const char *name, size_t length,
			 const struct sdsm_policy *pol,
			 struct bench_region *r);
/*
 * The same with extra SDSM_REGION_F_* @flags (F_EXCL is always set).  A
 * module that refuses a flag with EOPNOTSUPP exits BENCH_EXIT_MISSING.
 */
void bench_region_create_flags(int fd, const char *name, size_t length,
			       const struct sdsm_policy *pol, uint32_t flags,
			       struct bench_region *r);
void bench_region_open(int fd, const char *name, unsigned int timeout_s,
		       struct bench_region *r);
void bench_region_map(struct bench_region *r);
void bench_region_unmap(struct bench_region *r);
void bench_region_destroy(int fd, const char *name);

/*
 * Ask the home of every page of @r.  Returns the number of pages whose home
 * is not @home (errors count as wrong); prints the first few to stderr.
 */
size_t bench_check_homes(struct bench_region *r, int home);
/* The same, of pages 0, @stride, 2 * @stride, ... only. */
size_t bench_check_homes_stride(struct bench_region *r, int home,
				size_t stride);

void bench_barrier(int fd, uint64_t id, uint64_t nodemask,
		   unsigned int timeout_ms);

/* Wait until @path exists; 0, or -1 after @timeout_s seconds. */
int bench_wait_file(const char *path, unsigned int timeout_s);
void bench_create_file(const char *path);

#endif /* BENCH_LIB_H */
