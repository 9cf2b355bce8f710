/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdsm internals shared by its source files; never installed.
 *
 * Error rule: a failing function calls sdsm_fail(), which records a
 * one-line message for sdsm_last_error(), sets errno and returns -1.
 */
#ifndef SDSM_INTERNAL_H
#define SDSM_INTERNAL_H

#include <string.h>
#include <time.h>

#include "sdsm.h"

/* Most addresses SDSM_IOC_QUERY_HOME takes in one call. */
#define SDSM_QUERY_MAX	4096

int sdsm_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sdsm_clear_error(void);

/* The process's file of /dev/sdsm and the module's answer to GET_INFO. */
int sdsm_dev(struct sdsm_info *info);
int sdsm_dev_ioctl(unsigned long req, void *arg, uint64_t feature,
		   const char *what);

/*
 * sdsm_barrier() that also gives struct sdsm_barrier's out_flags (0 on an
 * error, and from a module without SDSM_FEATURE_BARRIER_SERIAL).
 */
int sdsm_barrier_out(uint64_t barrier_id, unsigned int count,
		     uint64_t nodemask, unsigned int timeout_ms,
		     uint32_t *out_flags);

/*
 * The request of SDSM_IOC_FUTEX: @op on @addr with @val, any bitset,
 * CLOCK_MONOTONIC, @timeout_ns relative (negative: none).
 */
static inline void sdsm_futex_req(struct sdsm_futex *f, uint32_t op,
				  const uint32_t *addr, uint32_t val,
				  int64_t timeout_ns)
{
	memset(f, 0, sizeof(*f));
	f->size = sizeof(*f);
	f->op = op;
	f->val = val;
	f->addr = (uintptr_t)addr;
	f->bitset = SDSM_FUTEX_BITSET_ANY;
	f->clockid = CLOCK_MONOTONIC;
	f->timeout_ns = timeout_ns < 0 ? -1 : timeout_ns;
}

/* nr_nodes of the live cluster, from sysfs or GET_INFO; 0 if unknown. */
unsigned int sdsm_live_nr_nodes(void);

/* sdsm_alloc.c: the process's heap (sdsm_heap.h) and raw system calls
 * that an interposed mmap() of libsdsm-preload.so does not see. */
struct sdsm_heap;
struct sdsm_heap *sdsm_heap_of(const struct sdsm_policy *policy);
struct sdsm_heap_ops;
void sdsm_heap_use(uintptr_t base, const struct sdsm_heap_ops *ops);
_Bool sdsm_heap_has(const void *p);
extern _Bool sdsm_heap_fork_private;
void *sdsm_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    long off);
int sdsm_sys_munmap(void *addr, size_t len);
int sdsm_owned_map(const char *name, void *addr, size_t len,
		   const struct sdsm_policy *policy, unsigned int flags,
		   int manager, int mapflags, uint32_t *id);
int sdsm_heap_consistency(unsigned int *flags);
int sdsm_cond_wait_on(struct sdsm_cond *cond, int (*unlock)(void *),
		      int (*lock)(void *), void *arg, unsigned int timeout_ms);

#endif /* SDSM_INTERNAL_H */
