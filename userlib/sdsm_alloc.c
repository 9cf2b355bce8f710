// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm allocation and named regions.
 *
 * Like numa_alloc_*(), which mmap and mbind, every allocation is a region
 * of its own: created with the policy under a unique name
 * "a.<node>.<pid>.<seq>" (SDSM_REGION_F_EXCL, so a clash is an error, not
 * a silent share), and mapped MAP_SHARED at the offset the kernel returns.
 * sdsm_free() unmaps and destroys it.  The process keeps a list of its
 * allocations, protected by sdsm_alloc_lock, to find the region of an
 * address; named regions are the caller's to track.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sdsm_internal.h"

struct sdsm_alloc_entry {
	struct sdsm_alloc_entry *next;
	void *addr;
	size_t length;
	uint32_t region_id;
};

/* Protects sdsm_allocs and sdsm_alloc_seq. */
static pthread_mutex_t sdsm_alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sdsm_alloc_entry *sdsm_allocs;
static unsigned long sdsm_alloc_seq;

static int sdsm_check_name(const char *name)
{
	size_t i, n;

	if (!name)
		return sdsm_fail(EINVAL, "region name is NULL");
	n = strlen(name);
	if (!n || n >= SDSM_NAME_MAX)
		return sdsm_fail(EINVAL, "region name '%s': must be 1..%d characters",
				 name, SDSM_NAME_MAX - 1);
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return sdsm_fail(EINVAL,
					 "region name '%s': only A-Z a-z 0-9 _ . - allowed",
					 name);
	}
	return 0;
}

static int sdsm_round_size(size_t size, uint64_t *length)
{
	if (!size)
		return sdsm_fail(EINVAL, "size 0");
	if (size > SIZE_MAX - (SDSM_PAGE_SIZE - 1))
		return sdsm_fail(ENOMEM, "size %zu too large", size);
	*length = (size + SDSM_PAGE_SIZE - 1) & ~(SDSM_PAGE_SIZE - 1);
	return 0;
}

static void *sdsm_map(int fd, uint64_t length, uint64_t offset,
		      const char *name)
{
	void *addr;

	addr = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)offset);
	if (addr == MAP_FAILED) {
		sdsm_fail(errno, "mmap of region '%s': %s", name,
			  strerror(errno));
		return NULL;
	}
	return addr;
}

static int sdsm_destroy_id(uint32_t region_id, const char *name)
{
	struct sdsm_region_destroy d;
	char what[64];

	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.region_id = region_id;
	snprintf(what, sizeof(what), "destroy region '%s'", name);
	return sdsm_dev_ioctl(SDSM_IOC_REGION_DESTROY, &d, SDSM_FEATURE_REGIONS,
			      what);
}

/* Create and map; on success *id gets the region id. */
static void *sdsm_create_map(const char *name, size_t size,
			     const struct sdsm_policy *policy,
			     unsigned int flags, uint32_t *id, uint64_t *len)
{
	struct sdsm_region_create c;
	uint64_t length = 0;
	char what[64];
	void *addr;
	int fd;

	if (sdsm_check_name(name) < 0)
		return NULL;
	if (!policy) {
		sdsm_fail(EINVAL, "region '%s': NULL policy", name);
		return NULL;
	}
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = flags;
	c.policy = *policy;
	if (sdsm_round_size(size, &length) < 0)
		return NULL;
	c.length = length;
	strcpy(c.name, name);
	snprintf(what, sizeof(what), "create region '%s'", name);
	if (sdsm_dev_ioctl(SDSM_IOC_REGION_CREATE, &c, SDSM_FEATURE_REGIONS,
			   what) < 0)
		return NULL;
	fd = sdsm_dev(NULL);
	addr = sdsm_map(fd, c.length, c.offset, name);
	if (!addr) {
		int err = errno;

		sdsm_destroy_id(c.region_id, name);
		errno = err;
		return NULL;
	}
	*id = c.region_id;
	*len = c.length;
	return addr;
}

void *sdsm_alloc_policy(size_t size, const struct sdsm_policy *policy)
{
	struct sdsm_alloc_entry *e;
	struct sdsm_info info;
	char name[SDSM_NAME_MAX];
	unsigned long seq;
	uint64_t len;
	uint32_t id;
	void *addr;

	if (sdsm_dev(&info) < 0)
		return NULL;
	e = malloc(sizeof(*e));
	if (!e) {
		sdsm_fail(ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_lock(&sdsm_alloc_lock);
	seq = sdsm_alloc_seq++;
	pthread_mutex_unlock(&sdsm_alloc_lock);
	snprintf(name, sizeof(name), "a.%u.%d.%lu", info.node_id, (int)getpid(),
		 seq);
	addr = sdsm_create_map(name, size, policy, SDSM_REGION_F_EXCL, &id,
			       &len);
	if (!addr) {
		free(e);
		return NULL;
	}
	e->addr = addr;
	e->length = len;
	e->region_id = id;
	pthread_mutex_lock(&sdsm_alloc_lock);
	e->next = sdsm_allocs;
	sdsm_allocs = e;
	pthread_mutex_unlock(&sdsm_alloc_lock);
	return addr;
}

void *sdsm_alloc(size_t size)
{
	struct sdsm_policy p;

	if (sdsm_get_policy(&p) < 0)
		return NULL;
	return sdsm_alloc_policy(size, &p);
}

void *sdsm_alloc_interleaved_subset(size_t size, uint64_t nodemask)
{
	struct sdsm_policy p;

	memset(&p, 0, sizeof(p));
	p.mode = SDSM_POLICY_INTERLEAVE;
	p.nodemask = nodemask;
	return sdsm_alloc_policy(size, &p);
}

void *sdsm_alloc_interleaved(size_t size)
{
	return sdsm_alloc_interleaved_subset(size, 0);
}

void *sdsm_alloc_onnode(size_t size, int node)
{
	struct sdsm_policy p;
	int nr = sdsm_num_nodes();

	if (nr < 0)
		return NULL;
	if (node < 0 || node >= nr || node >= 64) {
		sdsm_fail(EINVAL, "node %d out of range (nodes are 0-%d)", node,
			  nr - 1);
		return NULL;
	}
	memset(&p, 0, sizeof(p));
	p.mode = SDSM_POLICY_BIND;
	p.nodemask = 1ULL << node;
	return sdsm_alloc_policy(size, &p);
}

void *sdsm_alloc_local(size_t size)
{
	struct sdsm_policy p;

	memset(&p, 0, sizeof(p));
	p.mode = SDSM_POLICY_FIRST_TOUCH;
	return sdsm_alloc_policy(size, &p);
}

int sdsm_free(void *addr, size_t size)
{
	struct sdsm_alloc_entry **pp, *e;
	char name[32];
	int ret;

	if (!addr)
		return 0;
	pthread_mutex_lock(&sdsm_alloc_lock);
	for (pp = &sdsm_allocs; (e = *pp); pp = &e->next)
		if (e->addr == addr)
			break;
	if (e && size && (size > e->length || e->length - size >= SDSM_PAGE_SIZE))
		e = NULL;
	if (e)
		*pp = e->next;
	pthread_mutex_unlock(&sdsm_alloc_lock);
	if (!e)
		return sdsm_fail(EINVAL, "sdsm_free(%p, %zu): not an sdsm allocation of that size",
				 addr, size);
	munmap(e->addr, e->length);
	snprintf(name, sizeof(name), "id %u", e->region_id);
	ret = sdsm_destroy_id(e->region_id, name);
	free(e);
	return ret;
}

void *sdsm_region_create(const char *name, size_t size,
			 const struct sdsm_policy *policy, unsigned int flags)
{
	struct sdsm_policy def;
	uint64_t len;
	uint32_t id;

	if (!policy) {
		if (sdsm_get_policy(&def) < 0)
			return NULL;
		policy = &def;
	}
	if (flags & ~SDSM_REGION_F_EXCL) {
		sdsm_fail(EINVAL, "region '%s': unknown flags %#x", name ? name : "",
			  flags);
		return NULL;
	}
	return sdsm_create_map(name, size, policy, flags, &id, &len);
}

int sdsm_region_info(const char *name, struct sdsm_region_info *info)
{
	struct sdsm_region_info ri;
	char what[64];

	if (sdsm_check_name(name) < 0)
		return -1;
	if (!info)
		return sdsm_fail(EINVAL, "sdsm_region_info: NULL info");
	memset(&ri, 0, sizeof(ri));
	ri.size = sizeof(ri);
	strcpy(ri.name, name);
	snprintf(what, sizeof(what), "open region '%s'", name);
	if (sdsm_dev_ioctl(SDSM_IOC_REGION_OPEN, &ri, SDSM_FEATURE_REGIONS,
			   what) < 0)
		return -1;
	*info = ri;
	return 0;
}

int sdsm_region_info_id(uint32_t region_id, struct sdsm_region_info *info)
{
	struct sdsm_region_info ri;
	char what[64];

	if (!info)
		return sdsm_fail(EINVAL, "sdsm_region_info_id: NULL info");
	memset(&ri, 0, sizeof(ri));
	ri.size = sizeof(ri);
	ri.region_id = region_id;
	snprintf(what, sizeof(what), "region %u info", region_id);
	if (sdsm_dev_ioctl(SDSM_IOC_REGION_INFO, &ri, SDSM_FEATURE_REGIONS,
			   what) < 0)
		return -1;
	*info = ri;
	return 0;
}

void *sdsm_region_open(const char *name, size_t *size)
{
	struct sdsm_region_info ri;
	void *addr;

	if (sdsm_region_info(name, &ri) < 0)
		return NULL;
	addr = sdsm_map(sdsm_dev(NULL), ri.length, ri.offset, name);
	if (addr && size)
		*size = ri.length;
	return addr;
}

int sdsm_region_unmap(void *addr, size_t size)
{
	uint64_t len = 0;

	if (!addr || ((uintptr_t)addr & (SDSM_PAGE_SIZE - 1)))
		return sdsm_fail(EINVAL, "sdsm_region_unmap: bad address %p",
				 addr);
	if (sdsm_round_size(size, &len) < 0)
		return -1;
	if (munmap(addr, len) < 0)
		return sdsm_fail(errno, "munmap: %s", strerror(errno));
	return 0;
}

int sdsm_region_destroy(const char *name)
{
	struct sdsm_region_info ri;

	if (sdsm_region_info(name, &ri) < 0)
		return -1;
	return sdsm_destroy_id(ri.region_id, name);
}
