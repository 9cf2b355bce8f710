// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm allocation and named regions.
 *
 * Allocation.  sdsm_alloc*() (and the malloc family of libsdsm-preload.so)
 * take memory from one allocator, sdsm_heap.c: a heap per placement policy
 * carves many allocations out of few regions ("chunks" of 64 MiB or more,
 * at fixed addresses of the heap window, so the same address on every
 * node).  A chunk is a region named "a.<node>.<pid>.<seq>", created with
 * SDSM_REGION_F_EXCL | SDSM_REGION_F_OWNED: the module destroys it on
 * every node when the process's file of /dev/sdsm is released, at exit,
 * exec or death.  (A module without F_OWNED answers EOPNOTSUPP; the chunk
 * is then created without it and lives until destroyed by hand.)
 * sdsm_alloc*() hand out whole pages, zero-filled, as numa_alloc() does.
 * Every chunk of the process has one consistency, read once from
 * SDSM_CONSISTENCY (sdsmctl --consistency sets it): "release" creates
 * the chunks with SDSM_REGION_F_RELEASE, "sequential" or nothing without.
 *
 * fork().  The heap's metadata is in the shared chunks, so a child must
 * not allocate from its parent's chunks.  By default the child forgets
 * them (its allocations take new chunks; it may use, not free, what the
 * parent allocated: the memory stays shared, as MAP_SHARED memory does).
 * libsdsm-preload.so asks for private copies instead
 * (sdsm_heap_fork_private), which is what fork() means for a heap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sdsm_internal.h"
#include "sdsm_heap.h"

/* Protects sdsm_alloc_seq and sdsm_heap_ready. */
static pthread_mutex_t sdsm_alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long sdsm_alloc_seq;
static bool sdsm_heap_ready;
static bool sdsm_no_owned;	/* the module lacks SDSM_REGION_F_OWNED */
static bool sdsm_no_manager;	/* the module lacks SDSM_REGION_F_MANAGER */
static int sdsm_heap_cons = -1;	/* SDSM_REGION_F_* of SDSM_CONSISTENCY, once read */
struct sdsm_heap_space sdsm_heap_space;
bool sdsm_heap_fork_private;

void *sdsm_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    long off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int sdsm_sys_munmap(void *addr, size_t len)
{
	return syscall(SYS_munmap, addr, len);
}

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

/*
 * Create and map; on success *id gets the region id.  @flags: uapi
 * SDSM_REGION_F_*; @mode: the permission bits with SDSM_REGION_F_MODE.
 */
static void *sdsm_create_map(const char *name, size_t size,
			     const struct sdsm_policy *policy,
			     unsigned int flags, unsigned int mode,
			     uint32_t manager, uint32_t *id, uint64_t *len)
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
	c.mode = mode;
	c.manager = manager;
	c.policy = *policy;
	if (sdsm_round_size(size, &length) < 0)
		return NULL;
	c.length = length;
	strcpy(c.name, name);
	snprintf(what, sizeof(what), "create region '%s'", name);
	if (sdsm_dev_ioctl(SDSM_IOC_REGION_CREATE, &c, SDSM_FEATURE_REGIONS,
			   what) < 0) {
		/* A module with F_RELEASE has F_MODE and F_OWNED too. */
		if (errno == EOPNOTSUPP && (flags & SDSM_REGION_F_RELEASE))
			sdsm_fail(EOPNOTSUPP,
				  "%s: the loaded module lacks release consistency",
				  what);
		else if (errno == EOPNOTSUPP && (flags & SDSM_REGION_F_MANAGER))
			sdsm_fail(EOPNOTSUPP,
				  "%s: the loaded module lacks region managers",
				  what);
		else if (errno == EEXIST && !(flags & SDSM_REGION_F_EXCL))
			sdsm_fail(EEXIST,
				  "%s: it exists with another size, policy, manager or consistency",
				  what);
		return NULL;
	}
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

/* ---- the heap's backend: chunks are owned regions ---- */

/*
 * The SDSM_REGION_F_* of the heap's consistency into *@flags: 0 for
 * SDSM_CONSISTENCY unset, empty or "sequential", SDSM_REGION_F_RELEASE for
 * "release".  Read once per process, so all its chunks agree.  0, or -1
 * (EINVAL) for another value.
 */
int sdsm_heap_consistency(unsigned int *flags)
{
	const char *env;
	int f = __atomic_load_n(&sdsm_heap_cons, __ATOMIC_RELAXED);

	if (f < 0) {
		env = getenv("SDSM_CONSISTENCY");
		if (!env || !*env || !strcmp(env, "sequential"))
			f = 0;
		else if (!strcmp(env, "release"))
			f = SDSM_REGION_F_RELEASE;
		else
			return sdsm_fail(EINVAL,
					 "SDSM_CONSISTENCY: '%s' is neither sequential nor release",
					 env);
		__atomic_store_n(&sdsm_heap_cons, f, __ATOMIC_RELAXED);
	}
	*flags = f;
	return 0;
}

/*
 * True if @p fixes every page's home by itself (INTERLEAVE, BIND to one
 * node), as the module sees it: such a region has no manager to name.
 */
static bool sdsm_policy_computes_home(const struct sdsm_policy *p,
				      unsigned int nr_nodes)
{
	if (p->mode == SDSM_POLICY_INTERLEAVE)
		return true;
	return p->mode == SDSM_POLICY_BIND &&
	       (p->nodemask ? (unsigned int)__builtin_popcountll(p->nodemask) :
			      nr_nodes) == 1;
}

/*
 * Create region @name (EXCL, OWNED where the module has it, and @flags:
 * 0 or SDSM_REGION_F_RELEASE) of @len bytes under @policy and map it at
 * @addr with @mapflags (MAP_FIXED or MAP_FIXED_NOREPLACE).  @manager >= 0:
 * that node fixes the homes of pages the policy leaves to their first
 * touch (SDSM_REGION_F_MANAGER, where the module has it), so the node that
 * allocates places its own pages without a message.  0 or a negative errno
 * (-EEXIST: @addr is taken; -EOPNOTSUPP: the module lacks @flags).
 */
int sdsm_owned_map(const char *name, void *addr, size_t len,
		   const struct sdsm_policy *policy, unsigned int flags,
		   int manager, int mapflags, uint32_t *id)
{
	struct sdsm_region_create c;
	struct sdsm_info info;
	void *got;
	int fd, err;

	fd = sdsm_dev(&info);
	if (fd < 0)
		return -errno;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = SDSM_REGION_F_EXCL | flags |
		  (__atomic_load_n(&sdsm_no_owned, __ATOMIC_RELAXED) ? 0 :
		   SDSM_REGION_F_OWNED);
	if (manager >= 0 && !sdsm_policy_computes_home(policy, info.nr_nodes) &&
	    !__atomic_load_n(&sdsm_no_manager, __ATOMIC_RELAXED)) {
		c.flags |= SDSM_REGION_F_MANAGER;
		c.manager = manager;
	}
	c.policy = *policy;
	c.length = len;
	snprintf(c.name, sizeof(c.name), "%s", name);
	while (sdsm_dev_ioctl(SDSM_IOC_REGION_CREATE, &c, SDSM_FEATURE_REGIONS,
			      "create a heap region") < 0) {
		if (errno != EOPNOTSUPP)
			return -errno;
		/* An older module: first touches ask interleaved managers. */
		if (c.flags & SDSM_REGION_F_MANAGER) {
			__atomic_store_n(&sdsm_no_manager, true,
					 __ATOMIC_RELAXED);
			c.flags &= ~SDSM_REGION_F_MANAGER;
			c.manager = 0;
			continue;
		}
		/*
		 * F_RELEASE is newer than F_OWNED: a module without it is
		 * what refused, and the region must not be made sequential.
		 */
		if (flags & SDSM_REGION_F_RELEASE) {
			sdsm_fail(EOPNOTSUPP,
				  "create heap region '%s': the loaded module lacks release consistency",
				  c.name);
			return -EOPNOTSUPP;
		}
		if (!(c.flags & SDSM_REGION_F_OWNED))
			return -EOPNOTSUPP;
		/* An older module: the region outlives the process. */
		__atomic_store_n(&sdsm_no_owned, true, __ATOMIC_RELAXED);
		c.flags &= ~SDSM_REGION_F_OWNED;
	}
	got = sdsm_sys_mmap(addr, len, PROT_READ | PROT_WRITE,
			    MAP_SHARED | mapflags, fd, c.offset);
	if (got != addr) {
		err = got == MAP_FAILED ? errno : EEXIST;
		if (got != MAP_FAILED)
			sdsm_sys_munmap(got, len);
		sdsm_destroy_id(c.region_id, c.name);
		if (err != EEXIST)
			sdsm_fail(err, "mmap of region '%s': %s", c.name,
				  strerror(err));
		return -err;
	}
	*id = c.region_id;
	return 0;
}

static int sdsm_chunk_map(void *ctx, void *addr, size_t len,
			  const struct sdsm_policy *policy, uint32_t *id)
{
	struct sdsm_info info;
	char name[SDSM_NAME_MAX];
	unsigned int flags;
	unsigned long seq;

	(void)ctx;
	if (sdsm_dev(&info) < 0 || sdsm_heap_consistency(&flags) < 0)
		return -errno;
	pthread_mutex_lock(&sdsm_alloc_lock);
	seq = sdsm_alloc_seq++;
	pthread_mutex_unlock(&sdsm_alloc_lock);
	snprintf(name, sizeof(name), "a.%u.%d.%lu", info.node_id,
		 (int)getpid(), seq);
	return sdsm_owned_map(name, addr, len, policy, flags, info.node_id,
			      MAP_FIXED_NOREPLACE, id);
}

static void sdsm_chunk_unmap(void *ctx, void *addr, size_t len, uint32_t id)
{
	(void)ctx;
	sdsm_sys_munmap(addr, len);
	if (id)		/* 0: a child's private copy of a parent's chunk */
		sdsm_destroy_id(id, "heap chunk");
}

static const struct sdsm_heap_ops sdsm_chunk_ops = {
	.map = sdsm_chunk_map,
	.unmap = sdsm_chunk_unmap,
};

/* Replace @addr's shared mapping by a private copy of what was used. */
static int sdsm_privatize(void *addr, size_t len, size_t used_len,
			  const uint64_t *dirty, void *arg)
{
	size_t pg, npages = len / SDSM_PAGE_SIZE;
	char *tmp;

	(void)arg;
	tmp = sdsm_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -1;
	memcpy(tmp, addr, used_len);
	for (pg = used_len / SDSM_PAGE_SIZE; pg < npages; pg++)
		if (dirty[pg / 64] >> (pg % 64) & 1)
			memcpy(tmp + pg * SDSM_PAGE_SIZE,
			       (char *)addr + pg * SDSM_PAGE_SIZE,
			       SDSM_PAGE_SIZE);
	if ((void *)syscall(SYS_mremap, tmp, len, len,
			    MREMAP_MAYMOVE | MREMAP_FIXED, addr) != addr) {
		sdsm_sys_munmap(tmp, len);
		return -1;
	}
	sdsm_heap_chunk_disown(addr);
	return 0;
}

static void sdsm_heap_atfork_prepare(void)
{
	sdsm_heap_lock_all(&sdsm_heap_space);
}

static void sdsm_heap_atfork_parent(void)
{
	sdsm_heap_unlock_all(&sdsm_heap_space);
}

static void sdsm_heap_atfork_child(void)
{
	if (!sdsm_heap_fork_private)
		sdsm_heap_forget(&sdsm_heap_space);
	else if (sdsm_heap_for_each_chunk(&sdsm_heap_space, sdsm_privatize,
					  NULL))
		sdsm_heap_forget(&sdsm_heap_space);	/* out of memory */
	sdsm_heap_unlock_all(&sdsm_heap_space);
}

static uintptr_t sdsm_heap_base = SDSM_HEAP_BASE;
static const struct sdsm_heap_ops *sdsm_heap_ops = &sdsm_chunk_ops;

/*
 * Before the first sdsm_heap_of(): the space at @base, its chunks mapped
 * by @ops (libsdsm-preload.so's per-node job heaps, sdsm_shim.c).
 */
void sdsm_heap_use(uintptr_t base, const struct sdsm_heap_ops *ops)
{
	sdsm_heap_base = base;
	sdsm_heap_ops = ops;
}

/* The heap of @policy, setting up the space on first use. */
struct sdsm_heap *sdsm_heap_of(const struct sdsm_policy *policy)
{
	struct sdsm_heap *h;

	pthread_mutex_lock(&sdsm_alloc_lock);
	if (!sdsm_heap_ready) {
		sdsm_heap_space_init(&sdsm_heap_space, sdsm_heap_base,
				     sdsm_heap_ops, NULL);
		pthread_atfork(sdsm_heap_atfork_prepare,
			       sdsm_heap_atfork_parent,
			       sdsm_heap_atfork_child);
		__atomic_store_n(&sdsm_heap_ready, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sdsm_alloc_lock);
	h = sdsm_heap_get(&sdsm_heap_space, policy);
	if (!h)
		sdsm_fail(errno, "more than %d placement policies in use",
			  SDSM_HEAP_MAX);
	return h;
}

bool sdsm_heap_has(const void *p)
{
	return __atomic_load_n(&sdsm_heap_ready, __ATOMIC_ACQUIRE) &&
	       sdsm_heap_owns(&sdsm_heap_space, p);
}

/* What the kernel would refuse, refused before a heap is made for it. */
static int sdsm_policy_usable(const struct sdsm_policy *p)
{
	bool il = p->mode == SDSM_POLICY_INTERLEAVE;

	if (p->mode > SDSM_POLICY_FIRST_TOUCH ||
	    (p->block_size && (!il || p->block_size % SDSM_PAGE_SIZE)) ||
	    (p->preferred_node && p->mode != SDSM_POLICY_PREFERRED) ||
	    (p->nodemask && !il && p->mode != SDSM_POLICY_BIND))
		return sdsm_fail(EINVAL, "invalid policy (mode %u)", p->mode);
	return 0;
}

/*
 * Pages of one interleave rotation (1 for other policies): allocations of
 * at least that many pages start at a multiple of it, so their first page
 * is homed on the first node of the mask, as when each allocation was a
 * region of its own.  Smaller ones fill the gaps.
 */
static unsigned int sdsm_rotation(const struct sdsm_policy *p, uint64_t len)
{
	uint64_t nodes, block;

	if (p->mode != SDSM_POLICY_INTERLEAVE)
		return 1;
	nodes = p->nodemask ? (uint64_t)__builtin_popcountll(p->nodemask) :
			      sdsm_live_nr_nodes();
	block = p->block_size ? p->block_size / SDSM_PAGE_SIZE : 1;
	if (!nodes || nodes * block > 1024 ||
	    len < nodes * block * SDSM_PAGE_SIZE)
		return 1;
	return nodes * block;
}

void *sdsm_alloc_policy(size_t size, const struct sdsm_policy *policy)
{
	struct sdsm_heap *h;
	unsigned int cflags;
	uint64_t len = 0;
	void *addr;

	if (sdsm_dev(NULL) < 0)
		return NULL;
	if (!policy) {
		sdsm_fail(EINVAL, "NULL policy");
		return NULL;
	}
	if (sdsm_round_size(size, &len) < 0 || sdsm_policy_usable(policy) < 0 ||
	    sdsm_heap_consistency(&cflags) < 0)
		return NULL;
	h = sdsm_heap_of(policy);
	if (!h)
		return NULL;
	sdsm_clear_error();
	addr = sdsm_heap_alloc_pages(h, len, true, sdsm_rotation(policy, len));
	if (!addr && !strcmp(sdsm_last_error(), "no error"))
		sdsm_fail(errno, "allocation of %zu bytes: %s", size,
			  strerror(errno));
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
	struct sdsm_heap_block b;

	if (!addr)
		return 0;
	if (!sdsm_heap_has(addr) ||
	    sdsm_heap_find(&sdsm_heap_space, addr, &b) || !b.large ||
	    b.start != addr ||
	    (size && (size > b.usable || b.usable - size >= SDSM_PAGE_SIZE)) ||
	    sdsm_heap_free(&sdsm_heap_space, addr))
		return sdsm_fail(EINVAL, "sdsm_free(%p, %zu): not an sdsm allocation of that size",
				 addr, size);
	return 0;
}

/*
 * sdsm_region_create(_mode, _managed): @flags may add SDSM_REGION_F_MODE;
 * the caller's are SDSM_REGION_F_EXCL and SDSM_REGION_F_RELEASE.  @manager
 * is a node, or -1 for none (the interleaved managers).
 */
static void *sdsm_region_make(const char *name, size_t size,
			      const struct sdsm_policy *policy,
			      unsigned int flags, unsigned int mode,
			      int manager)
{
	const char *n = name ? name : "";
	struct sdsm_policy def;
	struct sdsm_info info;
	uint64_t len;
	uint32_t id;

	if (!policy) {
		if (sdsm_get_policy(&def) < 0)
			return NULL;
		policy = &def;
	}
	if (flags & ~(SDSM_REGION_F_EXCL | SDSM_REGION_F_MODE |
		      SDSM_REGION_F_RELEASE)) {
		sdsm_fail(EINVAL, "region '%s': unknown flags %#x", n, flags);
		return NULL;
	}
	if (mode & ~0777U) {
		sdsm_fail(EINVAL, "region '%s': bad mode %#o", n, mode);
		return NULL;
	}
	if (manager < -1) {
		sdsm_fail(EINVAL, "region '%s': bad manager %d", n, manager);
		return NULL;
	}
	if (manager >= 0) {
		if (sdsm_dev(&info) < 0)
			return NULL;
		if ((unsigned int)manager >= info.nr_nodes) {
			sdsm_fail(EINVAL,
				  "region '%s': manager %d: the cluster has nodes 0-%u",
				  n, manager, info.nr_nodes - 1);
			return NULL;
		}
		if (sdsm_policy_computes_home(policy, info.nr_nodes)) {
			sdsm_fail(EINVAL,
				  "region '%s': its policy fixes every home, so it has no manager to name",
				  n);
			return NULL;
		}
		flags |= SDSM_REGION_F_MANAGER;
	}
	return sdsm_create_map(name, size, policy, flags, mode,
			       manager < 0 ? 0 : manager, &id, &len);
}

void *sdsm_region_create(const char *name, size_t size,
			 const struct sdsm_policy *policy, unsigned int flags)
{
	/* Without SDSM_REGION_F_MODE (older modules lack it): mode 0600. */
	return sdsm_region_make(name, size, policy,
				flags & ~SDSM_REGION_F_MODE, 0, -1);
}

void *sdsm_region_create_mode(const char *name, size_t size,
			      const struct sdsm_policy *policy,
			      unsigned int flags, unsigned int mode)
{
	return sdsm_region_make(name, size, policy,
				flags | SDSM_REGION_F_MODE, mode, -1);
}

void *sdsm_region_create_managed(const char *name, size_t size,
				 const struct sdsm_policy *policy,
				 unsigned int flags, unsigned int mode,
				 int manager)
{
	return sdsm_region_make(name, size, policy,
				flags | SDSM_REGION_F_MODE, mode, manager);
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
