// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm-preload.so, job mode (sdsmctl -N): one program, one process per
 * node, threads placed over the nodes.  See sdsm_shim.h for the regions
 * and Documentation/preload.rst for what works and the limits.
 *
 * The launcher (SDSM_CPUNODES set, no SDSM_JOB) creates the job's regions in
 * its constructor, then, from its __libc_start_main, asks sdsmd on every
 * other node of the job to start a worker, waits (bounded) until each
 * worker has mapped the job, starts a service thread (output rings, exit
 * requests, dead workers) and runs main() on a stack in sdsm memory.
 * A worker (SDSM_JOB set) maps the job's heaps in its constructor, lets
 * the executable's constructors run on private .data, then maps the
 * launcher's .data/.bss over it and, instead of main(), serves thread
 * requests until the job ends.
 *
 * Every wait on another node is on SDSM_IOC_FUTEX with a timeout, and
 * re-checks that the job still runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../sdsm_internal.h"
#include "sdsm_shim.h"

#define EXPORT		__attribute__((visibility("default")))
#define MS		1000000LL

int sdsm_shim_role;			/* 0: none, 1: launcher, 2: worker */
struct shim_ctl *shim_job;
static int my_node;
static size_t heap_len;			/* of each node's heap: heap_mb MiB */
static unsigned int place_list[SDSM_MAX_NODES], place_n;
static __thread struct shim_thread *cur_thread;
/*
 * This thread's values of the job's keys (SHIM_KEYS, calloc'ed at its
 * first pthread_setspecific), and whether keys made now are the job's:
 * from the launcher's set-up on, and on a worker once its globals are the
 * job's (a key its constructors made went with their private globals).
 */
struct shim_spec {
	uint32_t seq;		/* the key's seq when the value was set */
	void *val;
};
static __thread struct shim_spec *cur_spec;
static bool job_keys;
static struct shim_thread *main_thread;	/* launcher: main()'s entry */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ending;

void shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void shim_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "sdsm: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* A worker's own standard error: not through the launcher. */
	if (write(shim_stderr(), buf, n) < 0)
		n = 0;
}

/* The end of the lines that name the job's heap (and its size). */
#define SHIM_HEAP_IS "this job over several nodes (sdsmctl -N) has a heap of %zu MiB on each node (sdsm's max_region_mb)"

/*
 * In a job, an allocation of @size bytes (@call: "malloc()", "mmap()")
 * that this node's heap could not serve: said once.  A job's heap is
 * heap_mb a node, which may be less than the node's memory, so the
 * program's ENOMEM may be the job's limit, not the machine's: it is named,
 * with the module parameter that sets it (shim_heap_size()).
 */
void shim_heap_full(const char *call, size_t size)
{
	static bool said;

	if (!sdsm_shim_role || __atomic_exchange_n(&said, true,
						   __ATOMIC_RELAXED))
		return;
	shim_say("%s of %zu bytes on node %d failed (ENOMEM): the node's heap is full; "
		 SHIM_HEAP_IS, call, size, my_node, heap_len >> 20);
}

/*
 * pthread_create() of a thread placed here whose stack of @len bytes
 * (and its guard) this node's heap cannot give: EAGAIN, as glibc's when
 * it cannot map a stack, and said once, as shim_heap_full().
 */
static void stack_full(size_t len)
{
	static bool said;

	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		shim_say("pthread_create() on node %d failed (EAGAIN): no room for a stack of %zu bytes in the node's heap; "
			 SHIM_HEAP_IS, my_node, len, heap_len >> 20);
}

/* Map region @name at @addr, where nothing may be mapped yet. */
static int map_at(const char *name, void *addr, size_t len)
{
	struct sdsm_region_info ri;
	void *p;

	if (sdsm_region_info(name, &ri) < 0)
		return -errno;
	if (ri.length < len)
		return -EINVAL;
	p = sdsm_sys_mmap(addr, len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED_NOREPLACE, sdsm_fd(),
			  ri.offset);
	if (p == MAP_FAILED)
		return -errno;
	if (p != addr) {	/* a kernel without NOREPLACE */
		sdsm_sys_munmap(p, len);
		return -EEXIST;
	}
	return 0;
}

/* @flags: 0 or SDSM_REGION_F_RELEASE. */
static int create_at(const char *name, void *addr, size_t len,
		     const struct sdsm_policy *pol, unsigned int flags,
		     int manager)
{
	uint32_t id;

	return sdsm_owned_map(name, addr, len, pol, flags, manager,
			      MAP_FIXED_NOREPLACE, &id);
}

/* ---- the heap backend: a reservation per node ---- */

static int shim_chunk_map(void *ctx, void *addr, size_t len,
			  const struct sdsm_policy *policy, uint32_t *id)
{
	uintptr_t base = shim_heap_base(my_node), a = (uintptr_t)addr;

	(void)ctx;
	(void)policy;
	if (a < base || a + len > base + heap_len || a + len < a)
		return -ENOMEM;
	*id = 0;
	return 0;
}

/*
 * A released chunk stays as it is in the reservation (keeps_data): the
 * heap clears what it reuses of it as it hands it out.  Zeroing it here
 * wrote every page of a freed large block, on a node that may never have
 * touched them: a page each (a remote fault where another node held it),
 * and the block's whole size in memory at once.
 */
static void shim_chunk_unmap(void *ctx, void *addr, size_t len, uint32_t id)
{
	(void)ctx;
	(void)addr;
	(void)len;
	(void)id;
}

static const struct sdsm_heap_ops shim_chunk_ops = {
	.map = shim_chunk_map,
	.unmap = shim_chunk_unmap,
	.keeps_data = true,
};

/* Foreign heap addresses: another node's reservation of this job. */
bool shim_foreign(const void *p)
{
	uintptr_t a = (uintptr_t)p, lo = shim_heap_base(0);

	return sdsm_shim_role && a >= lo &&
	       a < shim_heap_base(SDSM_MAX_NODES) &&
	       (a - lo) >> 40 != (uintptr_t)my_node;
}

/*
 * Blocks of node k's heap that this process freed and has not put on node
 * k's list yet (rbatch[k]): small blocks wait here until there are
 * SHIM_RFREE_BATCH of them or this node's loop comes round
 * (shim_flush_remote(): every turn of the launcher's service thread or
 * of a worker's loop, at most 200 ms).  A push moves node
 * k's list page here and node k's next look takes it back: a thread that
 * frees what another node allocated, block after block, paid that for each
 * block.  A large block begins a page; so a block that does not is a small
 * one, which waits, and one that does (large, or small by chance) goes at
 * once, as the pages of an munmap() do: what waits is at most
 * SHIM_RFREE_BATCH blocks of SDSM_HEAP_SMALL_MAX bytes per node.
 */
#define SHIM_RFREE_BATCH	64

static struct rbatch {
	pthread_mutex_t lock;
	unsigned int n;
	uint64_t *blk[SHIM_RFREE_BATCH];
} rbatch[SDSM_MAX_NODES] = {
	[0 ... SDSM_MAX_NODES - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

/*
 * Put blocks @blk[0 .. @n - 1] of node @k's heap on its list, linked in
 * that order, with one compare-and-swap.
 */
static void push_remote(unsigned int k, uint64_t **blk, unsigned int n)
{
	uint64_t *head = &shim_job->rfree[k].head, old;
	unsigned int i, j;

	/* Twice in one batch would make a loop of the list. */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (blk[i] == blk[j]) {
				shim_say("free(%p) on another node: double free or invalid pointer",
					 (void *)blk[i]);
				abort();
			}
	/*
	 * Release consistency: the blocks, their links included, are handed
	 * over under the hand-off lock; node k takes that lock after it
	 * took the list.  So no diff of this node's writes to a block
	 * reaches its home after node k handed the block out again.
	 */
	shim_rc_handoff(true);
	for (i = 0; i + 1 < n; i++)
		blk[i][0] = (uintptr_t)blk[i + 1];
	old = __atomic_load_n(head, __ATOMIC_RELAXED);
	do {
		blk[n - 1][0] = old;
	} while (!__atomic_compare_exchange_n(head, &old, (uintptr_t)blk[0],
					      true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	shim_rc_handoff(false);
}

/* Empty batch @b into @out (@b->lock held): how many blocks it had. */
static unsigned int take_batch(struct rbatch *b, uint64_t **out)
{
	unsigned int n = b->n;

	memcpy(out, b->blk, n * sizeof(*out));
	__atomic_store_n(&b->n, 0, __ATOMIC_RELAXED);
	return n;
}

/*
 * free() or munmap() (@len bytes) of @p, a block of another node's heap:
 * that node's heap metadata is its own, so the block goes on its list and
 * it gives the block back the next time it allocates or frees.
 */
void shim_free_remote(void *p, size_t len)
{
	unsigned int k = ((uintptr_t)p - shim_heap_base(0)) >> 40, n = 0;
	uint64_t *rec = p, *blk[SHIM_RFREE_BATCH];
	struct rbatch *b = &rbatch[k];

	rec[1] = len;
	if (len || !((uintptr_t)p & (SDSM_PAGE_SIZE - 1))) {
		push_remote(k, &rec, 1);
		return;
	}
	pthread_mutex_lock(&b->lock);
	b->blk[b->n] = rec;
	__atomic_store_n(&b->n, b->n + 1, __ATOMIC_RELAXED);
	if (b->n == SHIM_RFREE_BATCH)
		n = take_batch(b, blk);
	pthread_mutex_unlock(&b->lock);
	if (n)
		push_remote(k, blk, n);
}

/* From this node's loop: put every block waiting in a batch on its list. */
static void shim_flush_remote(void)
{
	uint64_t *blk[SHIM_RFREE_BATCH];
	unsigned int k, n;

	for (k = 0; k < SDSM_MAX_NODES; k++) {
		if (!__atomic_load_n(&rbatch[k].n, __ATOMIC_RELAXED))
			continue;
		pthread_mutex_lock(&rbatch[k].lock);
		n = take_batch(&rbatch[k], blk);
		pthread_mutex_unlock(&rbatch[k].lock);
		if (n)
			push_remote(k, blk, n);
	}
}

/* This node's blocks other nodes freed, as a list (NULL: none). */
uint64_t *shim_take_remote(void)
{
	uint64_t *head, *list;

	if (!sdsm_shim_role || !shim_job)
		return NULL;
	head = &shim_job->rfree[my_node].head;
	if (!__atomic_load_n(head, __ATOMIC_RELAXED))
		return NULL;
	list = (uint64_t *)(uintptr_t)__atomic_exchange_n(head, 0,
							  __ATOMIC_ACQUIRE);
	/* After the pushers' releases (shim_free_remote()). */
	shim_rc_sync();
	return list;
}

/* Bytes from @p to the end of its node's reservation. */
size_t shim_foreign_room(const void *p)
{
	uintptr_t a = (uintptr_t)p - shim_heap_base(0);

	return heap_len - (a & ((1UL << 40) - 1));
}

/* File @path into @buf: its length, or -1 (none, or @len or longer). */
static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len, f);
	fclose(f);
	return n == len ? -1 : (int)n;	/* full: too long */
}

/*
 * The launcher's heap size for each node: as large as this node's module
 * lets a region be (its max_region_mb, 4096 MiB by default), in whole
 * slots of libsdsm's heap, at most the node's window of it (1 TiB).
 * Untouched, a heap costs its nodes no memory: the region's pages are made
 * at their first touch.  1 GiB (the default of earlier versions) if the
 * parameter cannot be read.
 */
static size_t shim_heap_size(void)
{
	unsigned long long mb;
	char buf[24], *end;
	int n;

	n = read_file("/sys/module/sdsm/parameters/max_region_mb", buf,
		      sizeof(buf) - 1);
	if (n <= 0)
		return 1UL << 30;
	buf[n] = '\0';
	errno = 0;
	mb = strtoull(buf, &end, 10);
	if (errno || end == buf || mb > (SDSM_HEAP_SLOTS * SHIM_HEAP_UNIT) >> 20)
		mb = (SDSM_HEAP_SLOTS * SHIM_HEAP_UNIT) >> 20;
	return (mb << 20) / SHIM_HEAP_UNIT * SHIM_HEAP_UNIT;
}

/* glibc's default thread stack size here (RLIMIT_STACK), 0 if unknown. */
static size_t glibc_stack(void)
{
	pthread_attr_t d;
	size_t len = 0;

	if (!pthread_getattr_default_np(&d)) {
		pthread_attr_getstacksize(&d, &len);
		pthread_attr_destroy(&d);
	}
	return len;
}

/*
 * The stack of a thread whose creator set no size (stack_mb, set by the
 * launcher): glibc's default there (RLIMIT_STACK, 8 MiB usually), in
 * whole SHIM_STACK units, at least SHIM_STACK and at most a
 * SHIM_THREADS-th of a node's heap, so that the stacks of all the job's
 * threads fit in one node's heap.
 */
static size_t default_stack(void)
{
	size_t len = glibc_stack() / SHIM_STACK * SHIM_STACK;
	size_t most = heap_len / SHIM_THREADS / SHIM_STACK * SHIM_STACK;

	if (len > most)
		len = most;
	return len < SHIM_STACK ? SHIM_STACK : len;
}

/*
 * Create node @k's heap @name at its base, of heap_len bytes.  The first
 * heap created (@first) settles heap_len: while another node's
 * max_region_mb refuses it (EFBIG), the launcher halves it, down to one
 * slot.
 */
static int create_heap(const char *name, unsigned int k,
		       const struct sdsm_policy *pol, bool first)
{
	unsigned int flags = shim_job->consistency == SDSM_CONSISTENCY_RELEASE ?
			     SDSM_REGION_F_RELEASE : 0;
	int ret;

	for (;;) {
		ret = heap_len < SHIM_HEAP_UNIT ? -EFBIG :
		      create_at(name, (void *)shim_heap_base(k), heap_len, pol,
				flags, k);
		if (ret != -EFBIG || !first || heap_len <= SHIM_HEAP_UNIT)
			break;
		heap_len = heap_len / 2 / SHIM_HEAP_UNIT * SHIM_HEAP_UNIT;
	}
	if (ret == -EFBIG)	/* a node that refused logs why */
		shim_say("cannot create the heap of node %u (%s): sdsm's max_region_mb is below %lu MiB on a node",
			 k, name, (heap_len < SHIM_HEAP_UNIT ? SHIM_HEAP_UNIT :
				   heap_len) >> 20);
	return ret;
}

/*
 * Map (@create: create, under @pol) every node's heap.  With @create and
 * no @pol (the user gave no policy), a page is homed on the node of the
 * job that touches it first, as Linux places a process's memory by
 * default: a thread's rows, first written by that thread, are homed where
 * it runs, whoever malloc'ed them.  Node k manages its heap's pages
 * (SDSM_REGION_F_MANAGER, under a given policy that leaves homes to first
 * touch as well): what node k allocates and touches first it places
 * without a message, and another node's first touch asks node k only.
 * The launcher sizes the heaps (shim_heap_size(), create_heap()) and tells
 * the workers in heap_mb.
 */
static int map_heaps(const struct sdsm_policy *pol, bool create)
{
	struct sdsm_policy first = { .mode = SDSM_POLICY_FIRST_TOUCH };
	char name[SDSM_NAME_MAX];
	bool made = false;
	unsigned int k;
	int ret;

	if (create)
		heap_len = shim_heap_size();
	else
		heap_len = (size_t)shim_job->heap_mb << 20;
	for (k = 0; k < SDSM_MAX_NODES; k++) {
		if (!(shim_job->nodemask >> k & 1) && k != shim_job->launcher)
			continue;
		snprintf(name, sizeof(name), "%.24s.h%u", shim_job->prefix, k);
		if (create) {
			ret = create_heap(name, k, pol ? pol : &first, !made);
			made = true;
		} else {
			ret = map_at(name, (void *)shim_heap_base(k), heap_len);
		}
		if (ret == -EFBIG)
			return ret;
		if (ret) {
			shim_say("cannot map the heap of node %u (%s): %s", k,
				 name, strerror(-ret));
			return ret;
		}
	}
	if (create)
		shim_job->heap_mb = heap_len >> 20;
	sdsm_heap_use(shim_heap_base(my_node), &shim_chunk_ops);
	return 0;
}

/* This node's CPUs, asked of glibc (not of the interposers below). */
static int local_cpus(void)
{
	int (*real)(void) = dlsym(RTLD_NEXT, "get_nprocs");

	return real ? real() : 1;
}

/* ---- set-up, from the preload constructor ---- */

/*
 * The job's tag of its lock and barrier ids (shim_key()): 16 bits of the
 * launcher's node and pid, never 0 nor SHIM_INBOX_LOCK's.
 */
static uint32_t key_tag(void)
{
	uint32_t tag = shim_hash((uint64_t)my_node << 32 |
				 (uint32_t)getpid()) >> 48;

	return !tag || tag == SHIM_INBOX_LOCK >> 48 ? 1 : tag;
}

/*
 * SDSM_PLACE=@list: the nodes threads 1, 2, ... of the job run on, cycled,
 * into shim_job->place (each a node of the job's @mask; a node may come
 * again).  0, or -EINVAL after a message.
 */
static int place_parse(const char *list, uint64_t mask)
{
	const char *p = list;
	unsigned long k;
	char *end;

	while (*p) {
		errno = 0;
		k = strtoul(p, &end, 10);
		if (end == p || errno || *p == '-' || *p == '+' ||
		    (*end && *end != ',') || (end[0] == ',' && !end[1])) {
			shim_say("SDSM_PLACE=%s: want node ids separated by commas, e.g. 1,2,0",
				 list);
			return -EINVAL;
		}
		if (k >= SDSM_MAX_NODES || !(mask >> k & 1)) {
			shim_say("SDSM_PLACE=%s: node %lu is not a node of the job (SDSM_CPUNODES)",
				 list, k);
			return -EINVAL;
		}
		if (shim_job->place_len == SHIM_PLACE_MAX) {
			shim_say("SDSM_PLACE=%s: more than %d nodes", list,
				 SHIM_PLACE_MAX);
			return -EINVAL;
		}
		shim_job->place[shim_job->place_len++] = k;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/*
 * The launcher's descriptors are the job's (sdsm_fd.c): a worker keeps
 * numbers below fd_limit for them, so the launcher may not open more
 * than SHIM_FDS_MAX.
 */
static void fd_limit_set(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		rl.rlim_cur = 1024;
	if (rl.rlim_cur > SHIM_FDS_MAX) {
		rl.rlim_cur = SHIM_FDS_MAX;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	shim_job->fd_limit = rl.rlim_cur;
	shim_job->dev_fd = sdsm_fd();
}

static int launcher_init(const char *nodes, const char *placing,
			 const struct sdsm_policy *pol, unsigned int cflags)
{
	struct sdsm_policy cpol = { .mode = SDSM_POLICY_BIND };
	const char *given = getenv("SDSM_POLICY");
	char name[SDSM_NAME_MAX];
	uint64_t mask;
	unsigned int k;
	int n, ret;

	if (sdsm_parse_nodemask(nodes, sdsm_num_nodes(), &mask) < 0 || !mask) {
		shim_say("SDSM_CPUNODES=%s: %s", nodes, sdsm_last_error());
		return -EINVAL;
	}
	cpol.nodemask = 1ULL << my_node;
	snprintf(name, sizeof(name), "j.%d.%d.a", my_node, (int)getpid());
	if (!shim_create_owned(name, 4096, &cpol))
		goto fail;
	snprintf(name, sizeof(name), "j.%d.%d.c", my_node, (int)getpid());
	ret = create_at(name, (void *)SHIM_CTL_ADDR,
			(sizeof(*shim_job) + 4095) & ~4095UL, &cpol, 0, -1);
	if (ret) {
		shim_say("cannot create the job region %s at %#lx: %s", name,
			 SHIM_CTL_ADDR, strerror(-ret));
		return ret;
	}
	shim_job = (struct shim_ctl *)SHIM_CTL_ADDR;
	snprintf(shim_job->prefix, sizeof(shim_job->prefix), "j.%d.%d", my_node,
		 (int)getpid());
	shim_job->launcher = my_node;
	shim_job->launcher_pid = getpid();
	shim_job->nodemask = mask;
	shim_job->consistency = cflags & SDSM_REGION_F_RELEASE ?
				SDSM_CONSISTENCY_RELEASE :
				SDSM_CONSISTENCY_SEQUENTIAL;
	shim_job->key_tag = key_tag();
	n = readlink("/proc/self/exe", shim_job->exe,
		     sizeof(shim_job->exe) - 1);
	if (n <= 0 || !getcwd(shim_job->cwd, sizeof(shim_job->cwd))) {
		shim_say("cannot read this program's path or directory: %s",
			 strerror(errno));
		return -errno;
	}
	n = read_file("/proc/self/cmdline", shim_job->blob, SHIM_BLOB);
	if (n < 0)
		goto toolong;
	shim_job->argv_len = n;
	n = read_file("/proc/self/environ", shim_job->blob + n, SHIM_BLOB - n);
	if (n < 0)
		goto toolong;
	shim_job->env_len = n;
	/*
	 * Threads 1, 2, ... start on the node after main()'s: main() is
	 * thread 0 of the launcher's node, so n threads over n nodes (a
	 * waiting main() and its workers) and an OpenMP team of n (main()
	 * works) both give every node one.
	 */
	for (k = 0; k < SDSM_MAX_NODES; k++) {
		if (!(mask >> k & 1))
			continue;
		place_list[place_n++] = k;
		if (k <= (unsigned int)my_node)
			shim_job->place_next = place_n;
	}
	if (placing && *placing) {
		shim_job->place_next = 0;
		ret = place_parse(placing, mask);
		if (ret)
			return ret;
	}
	ret = map_heaps(given && *given ? pol : NULL, true);
	if (ret)
		return ret;
	shim_job->stack_mb = default_stack() >> 20;
	shim_job->node[my_node].ncpus = local_cpus();
	fd_limit_set();
	shim_job->magic = SHIM_MAGIC;
	return 0;
toolong:
	shim_say("argv and environment exceed %d bytes", SHIM_BLOB);
	return -E2BIG;
fail:
	shim_say("cannot create the job region %s: %s", name,
		 sdsm_last_error());
	return -EIO;
}

static int worker_init(const char *job)
{
	char name[SDSM_NAME_MAX];
	unsigned int k;
	int ret;

	snprintf(name, sizeof(name), "%.24s.c", job);
	ret = map_at(name, (void *)SHIM_CTL_ADDR, sizeof(*shim_job));
	if (!ret)
		shim_job = (struct shim_ctl *)SHIM_CTL_ADDR;
	if (ret || shim_job->magic != SHIM_MAGIC) {
		shim_say("node %d: cannot map job %s: %s", my_node, name,
			 ret ? strerror(-ret) : "bad magic");
		return -EINVAL;
	}
	for (k = 0; k < SDSM_MAX_NODES; k++)
		if (shim_job->nodemask >> k & 1)
			place_list[place_n++] = k;
	return map_heaps(NULL, false);
}

/*
 * From the preload constructor, before the heap exists; @cflags: the
 * heap's (and the globals') SDSM_REGION_F_RELEASE or 0.  0 (no job, or
 * set up), or a negative errno after a message.
 */
int shim_init(const struct sdsm_policy *pol, unsigned int cflags)
{
	const char *job = getenv("SDSM_JOB"), *nodes = getenv("SDSM_CPUNODES");
	const char *placing = getenv("SDSM_PLACE");

	if (!(job && *job) && !(nodes && *nodes))
		return 0;
	my_node = sdsm_node_id();
	if (my_node < 0)
		return -ENODEV;
	/* The program's own children are not part of the job. */
	unsetenv("SDSM_JOB");
	unsetenv("SDSM_CPUNODES");
	unsetenv("SDSM_PLACE");
	if (job && *job) {
		sdsm_shim_role = 2;
		return worker_init(job);
	}
	sdsm_shim_role = 1;
	return launcher_init(nodes, placing, pol, cflags);
}

/* The globals region's name, or NULL outside a job. */
const char *shim_globals_name(char *buf, size_t len)
{
	if (!sdsm_shim_role)
		return NULL;
	snprintf(buf, len, "%.24s.g", shim_job->prefix);
	return buf;
}

void shim_set_globals(void *addr, size_t len)
{
	if (sdsm_shim_role == 1) {
		shim_job->globals_addr = (uintptr_t)addr;
		shim_job->globals_len = len;
	}
}

/* ---- threads ---- */

static int (*real_create)(pthread_t *, const pthread_attr_t *,
			  void *(*)(void *), void *);
static int (*real_join)(pthread_t, void **);
static int (*real_tryjoin)(pthread_t, void **);
static int (*real_detach)(pthread_t);
static void (*real_exit)(void *) __attribute__((noreturn));
static pthread_t (*real_self)(void);
static int (*real_kill)(pthread_t, int);
static int (*real_cancel)(pthread_t);
static int (*real_sigaction)(int, const struct sigaction *,
			     struct sigaction *);

static void resolve(void)
{
	if (real_create)
		return;
	real_kill = dlsym(RTLD_NEXT, "pthread_kill");
	real_cancel = dlsym(RTLD_NEXT, "pthread_cancel");
	real_sigaction = dlsym(RTLD_NEXT, "sigaction");
	real_join = dlsym(RTLD_NEXT, "pthread_join");
	real_tryjoin = dlsym(RTLD_NEXT, "pthread_tryjoin_np");
	real_detach = dlsym(RTLD_NEXT, "pthread_detach");
	real_exit = dlsym(RTLD_NEXT, "pthread_exit");
	real_self = dlsym(RTLD_NEXT, "pthread_self");
	__atomic_store_n(&real_create, dlsym(RTLD_NEXT, "pthread_create"),
			 __ATOMIC_RELEASE);
}

/*
 * Whether slot i's thread runs in this process and may be signalled, in
 * this process's own memory (never trapped), under here_lock[i].
 *
 * glibc's pthread_kill() (and pthread_cancel(), which sends SIGCANCEL
 * with it) and a thread that exits both take the thread's exit_lock with
 * every signal blocked.  That lock is in its struct pthread, at the top of
 * its stack, which is sdsm memory: contended, it is a trapped futex with
 * SIGSYS blocked, and the kernel kills the process ("Bad system call").
 * So a node's loop signals a thread only under here_lock[] while
 * here_running[] says so, and a thread clears that under the same lock
 * before it goes on to exit: the two never meet on exit_lock.
 */
static pthread_mutex_t here_lock[SHIM_THREADS] = {
	[0 ... SHIM_THREADS - 1] = PTHREAD_MUTEX_INITIALIZER
};
static bool here_running[SHIM_THREADS];

static void thread_here(struct shim_thread *t, bool running)
{
	unsigned int i = t - shim_job->threads;

	pthread_mutex_lock(&here_lock[i]);
	here_running[i] = running;
	pthread_mutex_unlock(&here_lock[i]);
}

int shim_thread_slot(void)
{
	return cur_thread ? (int)(cur_thread - shim_job->threads) : -1;
}

/* A thread of this process only (not the job's), detached. */
int shim_native_thread(void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_t tid;
	int ret;

	resolve();
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ret = real_create(&tid, &a, fn, arg);
	pthread_attr_destroy(&a);
	return ret;
}

static struct shim_thread *ours(pthread_t t)
{
	struct shim_thread *s = (struct shim_thread *)t;

	if (!sdsm_shim_role || !shim_job || s < shim_job->threads ||
	    s >= shim_job->threads + SHIM_THREADS ||
	    ((uintptr_t)s - (uintptr_t)shim_job->threads) % sizeof(*s))
		return NULL;
	return s;
}

static void keys_destroy(void);

static void thread_end(struct shim_thread *t, void *ret)
{
	uint32_t ex = SHIM_T_EXITED;

	t->ret = (uintptr_t)ret;
	shim_rc_sync();		/* a release of the thread's writes */
	__atomic_store_n(&t->state, SHIM_T_EXITED, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->detached, __ATOMIC_SEQ_CST))
		__atomic_compare_exchange_n(&t->state, &ex, SHIM_T_FREE, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	sdsm_futex_wake(&t->state, INT_MAX);
}

/*
 * In job thread @t, at its end (a return, pthread_exit() or a
 * cancellation): its keys' destructors, then it ends with @ret.
 */
static void thread_leave(struct shim_thread *t, void *ret)
{
	keys_destroy();
	/* A worker's last part line goes out before the thread is joined. */
	if (sdsm_shim_role == 2 && __fpending(stdout))
		fflush(stdout);
	cur_thread = NULL;
	thread_here(t, false);
	thread_end(t, ret);
}

/* Cancelled (unwinding from a cancellation point): joiners get that. */
static void cancelled(void *arg)
{
	struct shim_thread *t = arg;

	if (!t || cur_thread != t)
		return;		/* pthread_exit() ended it already */
	thread_leave(t, PTHREAD_CANCELED);
}

static void *trampoline(void *arg)
{
	struct shim_thread *t = arg;
	void *(*fn)(void *) = (void *(*)(void *))(uintptr_t)t->fn;
	void *ret;

	__atomic_store_n(&t->real, (uintptr_t)real_self(), __ATOMIC_RELEASE);
	thread_here(t, true);
	cur_thread = t;
	shim_rc_sync();		/* an acquire of what its creator wrote */
	pthread_cleanup_push(cancelled, t);
	ret = fn((void *)(uintptr_t)t->arg);
	pthread_cleanup_pop(0);
	thread_leave(t, ret);
	return NULL;
}

extern void *shim_stack_alloc(size_t len);

static uint64_t mask_of(const sigset_t *set)
{
	uint64_t m = 0;
	int sig;

	for (sig = 1; sig <= 64; sig++)
		if (sigismember(set, sig) == 1)
			m |= 1ULL << (sig - 1);
	return m;
}

static void set_of(uint64_t m, sigset_t *set)
{
	int sig;

	sigemptyset(set);
	for (sig = 1; sig <= 64; sig++)
		if (m >> (sig - 1) & 1)
			sigaddset(set, sig);
}

/*
 * The stacks of the threads this process started, reused.  A thread's own
 * (glibc) thread is joinable; once the kernel has cleared its tid at its
 * exit, glibc's pthread_tryjoin_np() succeeds (it does not wait, so no
 * futex on the stack is involved) and nothing uses the stack any more: it
 * goes on @idle for the next thread placed here.  glibc clears the thread
 * descriptor and TLS it puts on a stack it is given, as it does with its
 * own stack cache.  Stacks are never given back to the heap: a process
 * holds as many as it ever ran threads at once.  Process memory, not the
 * job's, under @lock.
 */
static struct {
	pthread_mutex_t lock;
	unsigned int nr_live, nr_idle;
	struct {
		pthread_t real;
		void *stack;
		size_t len;
	} live[SHIM_STACKS];		/* started, not yet seen ended */
	struct {
		void *stack;
		size_t len;
	} idle[SHIM_STACKS];		/* ended threads' */
} stacks = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * A new stack of @len bytes in this node's heap (never given back), above
 * a guard of SHIM_STACK_GUARD bytes that this process cannot touch: a
 * thread that runs past the bottom of its stack dies of SIGSEGV, as a
 * native thread that runs into its guard page, instead of writing over
 * the heap below it (another thread's stack, the program's blocks).  The
 * guard is this process's alone: only threads of this node run on the
 * stack.  Without it (mprotect() failed, which is said once) the stack
 * is used all the same.
 */
static void *stack_alloc(size_t len)
{
	static bool said;
	char *p = shim_stack_alloc(len + SHIM_STACK_GUARD);

	if (!p)
		return NULL;
	if (mprotect(p, SHIM_STACK_GUARD, PROT_NONE) &&
	    !__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		shim_say("a thread stack has no guard: mprotect: %s",
			 strerror(errno));
	return p + SHIM_STACK_GUARD;
}

/* A stack of @len bytes for a new thread: an ended thread's, or new. */
static void *stack_get(size_t len)
{
	void *stack = NULL;
	unsigned int i;

	pthread_mutex_lock(&stacks.lock);
	for (i = 0; i < stacks.nr_live; ) {
		if (real_tryjoin(stacks.live[i].real, NULL)) {
			i++;
			continue;
		}
		stacks.idle[stacks.nr_idle].stack = stacks.live[i].stack;
		stacks.idle[stacks.nr_idle++].len = stacks.live[i].len;
		stacks.live[i] = stacks.live[--stacks.nr_live];
	}
	for (i = 0; i < stacks.nr_idle; i++) {
		if (stacks.idle[i].len != len)
			continue;
		stack = stacks.idle[i].stack;
		stacks.idle[i] = stacks.idle[--stacks.nr_idle];
		break;
	}
	pthread_mutex_unlock(&stacks.lock);
	return stack ? stack : stack_alloc(len);
}

/*
 * @stack (@len bytes): its thread @real started (@ret 0), or could not be
 * (the stack is free).
 */
static void stack_started(void *stack, size_t len, pthread_t real, int ret)
{
	pthread_mutex_lock(&stacks.lock);
	if (ret) {
		stacks.idle[stacks.nr_idle].stack = stack;
		stacks.idle[stacks.nr_idle++].len = len;
	} else if (stacks.nr_live < SHIM_STACKS) {
		stacks.live[stacks.nr_live].real = real;
		stacks.live[stacks.nr_live].len = len;
		stacks.live[stacks.nr_live++].stack = stack;
	} else {
		real_detach(real);	/* not reused: cannot happen */
	}
	pthread_mutex_unlock(&stacks.lock);
}

/*
 * The stack a thread created with @attr gets: 0 for default_stack(), or
 * the size the program set in @attr (pthread_attr_setstacksize()) if
 * larger than SHIM_STACK, rounded up to SHIM_STACK.  A size equal to
 * glibc's default (RLIMIT_STACK) counts as not set: glibc reports it for
 * an attribute nobody sized.
 */
static uint64_t stack_len(const pthread_attr_t *attr)
{
	size_t len = 0;

	if (!attr || pthread_attr_getstacksize(attr, &len) || len <= SHIM_STACK ||
	    len == glibc_stack())
		return 0;
	return (len + SHIM_STACK - 1) / SHIM_STACK * SHIM_STACK;
}

/* Start @t here, on a stack in sdsm memory, with its creator's mask. */
static int spawn(struct shim_thread *t)
{
	size_t len = t->stack ? t->stack : (size_t)shim_job->stack_mb << 20;
	pthread_attr_t a;
	pthread_t tid;
	sigset_t mask;
	void *stack;
	int ret;

	stack = stack_get(len);
	if (!stack) {
		stack_full(len);
		return EAGAIN;
	}
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, stack, len);
	set_of(t->sigmask, &mask);
	pthread_attr_setsigmask_np(&a, &mask);
	ret = real_create(&tid, &a, trampoline, t);
	pthread_attr_destroy(&a);
	if (!ret)	/* before pthread_create() returns: thread_get() */
		__atomic_store_n(&t->real, (uintptr_t)tid, __ATOMIC_RELEASE);
	stack_started(stack, len, tid, ret);
	return ret;
}

/* Wake the loop of node @k: it has a thread to start or a request. */
static void kick(unsigned int k)
{
	__atomic_add_fetch(&shim_job->node[k].wseq, 1, __ATOMIC_SEQ_CST);
	sdsm_futex_wake(&shim_job->node[k].wseq, 1);
	if (k == shim_job->launcher) {
		__atomic_add_fetch(&shim_job->event, 1, __ATOMIC_SEQ_CST);
		sdsm_futex_wake(&shim_job->event, 1);
	}
}

/*
 * Send @t (placed here) what pthread_kill() and pthread_cancel() asked:
 * only while it runs (see here_lock[]); before it started, next time;
 * once it is exiting, never.
 */
static void deliver(struct shim_thread *t)
{
	unsigned int i = t - shim_job->threads;
	uint64_t sigs;
	pthread_t real;
	int sig;

	if (!__atomic_load_n(&t->sigpend, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&t->cancel, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&here_lock[i]);
	real = (pthread_t)__atomic_load_n(&t->real, __ATOMIC_ACQUIRE);
	if (!here_running[i] || !real)
		goto out;
	if (__atomic_load_n(&t->sigpend, __ATOMIC_RELAXED)) {
		sigs = __atomic_exchange_n(&t->sigpend, 0, __ATOMIC_SEQ_CST);
		for (sig = 1; sig <= 64; sig++)
			if (sigs >> (sig - 1) & 1)
				real_kill(real, sig);
	}
	if (__atomic_load_n(&t->cancel, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&t->cancel, 0, __ATOMIC_SEQ_CST))
		real_cancel(real);
out:
	pthread_mutex_unlock(&here_lock[i]);
}

/*
 * The dispositions the program set on any node, set here too.  Stacks and
 * handlers are at the same addresses on every node; a signal is sent by
 * pthread_kill() only after its disposition was published, and this runs
 * before the requests are served.
 */
static uint32_t sig_gen_seen;

static bool shared_sig(int sig)
{
	return sig > 0 && sig < SHIM_NSIG && sig != SIGSYS && sig != SIGBUS &&
	       sig != SIGKILL && sig != SIGSTOP;
}

/*
 * On a worker, a handler runs through a trampoline that tells sdsm_fd.c
 * it ran (shim_fd_handler_ran()): a call passed on to the launcher that
 * it interrupts then ends with EINTR, as the kernel ends a blocking
 * read() natively if the handler has no SA_RESTART, and a poll() in
 * any case; a read() goes on after one with SA_RESTART.  What
 * sigaction() and signal() return is the program's own handler and
 * flags.  wrapped[sig]: the handler the trampoline calls.
 */
struct wrapped_act {
	uintptr_t fn;
	int flags;
};

static struct wrapped_act wrapped[SHIM_NSIG];

static void handler_tramp(int sig, siginfo_t *info, void *ctx)
{
	uintptr_t fn = __atomic_load_n(&wrapped[sig].fn, __ATOMIC_ACQUIRE);
	int flags = __atomic_load_n(&wrapped[sig].flags, __ATOMIC_RELAXED);

	shim_fd_handler_ran(flags & SA_RESTART);
	if (flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))fn)(sig, info, ctx);
	else
		((void (*)(int))fn)(sig);
}

static bool wants_tramp(int sig, const struct sigaction *act)
{
	return sdsm_shim_role == 2 && shared_sig(sig) &&
	       act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

/* sigaction(2), with the trampoline where wants_tramp(). */
static int set_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	struct wrapped_act prev;
	struct sigaction t;
	int ret;

	if (sig <= 0 || sig >= SHIM_NSIG)
		return real_sigaction(sig, act, old);
	prev = wrapped[sig];
	if (act && wants_tramp(sig, act)) {
		t = *act;
		t.sa_sigaction = handler_tramp;
		t.sa_flags |= SA_SIGINFO;
		__atomic_store_n(&wrapped[sig].flags, act->sa_flags,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&wrapped[sig].fn, (uintptr_t)act->sa_sigaction,
				 __ATOMIC_RELEASE);
		act = &t;
	}
	ret = real_sigaction(sig, act, old);
	if (ret && act == &t)
		wrapped[sig] = prev;
	if (!ret && old && old->sa_sigaction == handler_tramp) {
		old->sa_sigaction = (void (*)(int, siginfo_t *, void *))prev.fn;
		old->sa_flags = (old->sa_flags & ~SA_SIGINFO) |
				(prev.flags & SA_SIGINFO);
	}
	return ret;
}

static void apply_sigactions(void)
{
	uint32_t gen = __atomic_load_n(&shim_job->sig_gen, __ATOMIC_ACQUIRE);
	struct sigaction sa;
	int sig;

	if (gen == sig_gen_seen)
		return;
	sig_gen_seen = gen;
	for (sig = 1; sig < SHIM_NSIG; sig++) {
		struct shim_sigact *a = &shim_job->sigact[sig];

		if (!shared_sig(sig) || !__atomic_load_n(&a->set,
							  __ATOMIC_ACQUIRE))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = (void (*)(int, siginfo_t *, void *))
				  (uintptr_t)a->handler;
		sa.sa_flags = (int)a->flags;
		set_of(a->mask, &sa.sa_mask);
		set_sigaction(sig, &sa, NULL);
	}
}

static void publish_sigaction(int sig, const struct sigaction *sa)
{
	struct shim_sigact *a;

	if (!sdsm_shim_role || !shim_job || !shared_sig(sig))
		return;
	a = &shim_job->sigact[sig];
	a->handler = (uintptr_t)sa->sa_sigaction;
	a->mask = mask_of(&sa->sa_mask);
	a->flags = (uint32_t)sa->sa_flags;
	__atomic_store_n(&a->set, 1, __ATOMIC_RELEASE);
	sig_gen_seen = __atomic_add_fetch(&shim_job->sig_gen, 1,
					  __ATOMIC_SEQ_CST);
}

EXPORT int sigaction(int sig, const struct sigaction *act,
		     struct sigaction *old)
{
	int ret;

	resolve();
	ret = set_sigaction(sig, act, old);
	if (!ret && act)
		publish_sigaction(sig, act);
	return ret;
}

/*
 * After a libc call that set @sig's disposition through glibc's internal
 * sigaction, past the one above (signal(), bsd_signal(), sysv_signal(),
 * sigset(), siginterrupt()): the program's action, taken back from behind
 * a trampoline the call may have read and written again, is set once
 * more through set_sigaction() (the trampoline where wants_tramp()) and
 * published.
 */
static void adopt_sigaction(int sig)
{
	struct sigaction now;

	if (sig <= 0 || sig >= SHIM_NSIG || set_sigaction(sig, NULL, &now))
		return;
	if (!set_sigaction(sig, &now, NULL))
		publish_sigaction(sig, &now);
}

/* Indexes of libc_set_handler()'s table. */
enum { LIBC_SIGNAL, LIBC_SYSV_SIGNAL, LIBC_SIGSET, LIBC_SIG_CALLS };

/*
 * glibc's @name (one of the calls that take a handler and return the
 * previous one), then adopt_sigaction(); the previous handler as the
 * program set it, not the trampoline.
 */
static sighandler_t libc_set_handler(unsigned int i, const char *name,
				     int sig, sighandler_t handler)
{
	static sighandler_t (*real[LIBC_SIG_CALLS])(int, sighandler_t);
	sighandler_t (*f)(int, sighandler_t);
	sighandler_t ret;

	resolve();
	f = __atomic_load_n(&real[i], __ATOMIC_RELAXED);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		if (!f) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		__atomic_store_n(&real[i], f, __ATOMIC_RELAXED);
	}
	ret = f(sig, handler);
	if (ret == SIG_ERR)
		return ret;
	if ((uintptr_t)ret == (uintptr_t)handler_tramp)
		ret = (sighandler_t)wrapped[sig].fn;
	adopt_sigaction(sig);
	return ret;
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return libc_set_handler(LIBC_SIGNAL, "signal", sig, handler);
}

/* glibc's bsd_signal() is its signal(). */
EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return libc_set_handler(LIBC_SIGNAL, "signal", sig, handler);
}

EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return libc_set_handler(LIBC_SYSV_SIGNAL, "sysv_signal", sig,
				handler);
}

EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
	return libc_set_handler(LIBC_SIGSET, "sigset", sig, disp);
}

EXPORT int siginterrupt(int sig, int flag)
{
	static int (*real)(int, int);
	int ret;

	resolve();
	if (!real)
		real = dlsym(RTLD_NEXT, "siginterrupt");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	ret = real(sig, flag);
	if (!ret)
		adopt_sigaction(sig);
	return ret;
}

/* Start the threads placed here; serve the requests for those running. */
static void serve_threads(void)
{
	unsigned int i;

	apply_sigactions();
	for (i = 0; i < SHIM_THREADS; i++) {
		struct shim_thread *t = &shim_job->threads[i];
		uint32_t st = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
		uint32_t nw = SHIM_T_NEW;

		if (t->node != (uint32_t)my_node)
			continue;
		if (st == SHIM_T_RUNNING) {
			deliver(t);
			continue;
		}
		if (st != SHIM_T_NEW ||
		    !__atomic_compare_exchange_n(&t->state, &nw,
						 SHIM_T_RUNNING, false,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		if (spawn(t)) {
			shim_say("node %d: cannot start a thread", my_node);
			thread_end(t, NULL);
		}
	}
}

static unsigned int place(void)
{
	unsigned int i = __atomic_fetch_add(&shim_job->place_next, 1,
					    __ATOMIC_SEQ_CST);

	if (shim_job->place_len)
		return shim_job->place[i % shim_job->place_len];
	return place_list[i % place_n];
}

/*
 * A free entry of the thread table, claimed (SHIM_T_CLAIMED) for a thread
 * that runs @fn(@arg) on this node (the caller may place it elsewhere),
 * or NULL if all are taken.
 */
static struct shim_thread *slot_claim(uintptr_t fn, uintptr_t arg,
				      bool detached, uint64_t sigmask)
{
	struct shim_thread *t;
	unsigned int i;
	uint32_t f;

	for (i = 0; i < SHIM_THREADS; i++) {
		t = &shim_job->threads[i];
		f = SHIM_T_FREE;
		if (!__atomic_compare_exchange_n(&t->state, &f, SHIM_T_CLAIMED,
						 false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		t->fn = fn;
		t->arg = arg;
		t->ret = 0;
		t->detached = detached;
		t->node = my_node;
		t->real = 0;
		t->sigpend = 0;
		t->cancel = 0;
		t->sigmask = sigmask;
		t->stack = 0;
		return t;
	}
	return NULL;
}

/* No thread in entry @t (free, or being set up by pthread_create()). */
static bool slot_unused(const struct shim_thread *t)
{
	uint32_t st = __atomic_load_n(&t->state, __ATOMIC_SEQ_CST);

	return st == SHIM_T_FREE || st == SHIM_T_CLAIMED;
}

/*
 * pthread_create() past the job's SHIM_THREADS: EAGAIN, as natively past
 * a limit of the machine, and said once, since this one is the job's.
 */
static void threads_full(void)
{
	static bool said;

	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		shim_say("pthread_create() on node %d failed (EAGAIN): a job over several nodes (sdsmctl -N) has at most %d threads alive or not yet joined at once, main() included",
			 my_node, SHIM_THREADS);
}

EXPORT int pthread_create(pthread_t *tp, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	int detach = PTHREAD_CREATE_JOINABLE, ret;
	struct shim_thread *t;
	unsigned int node;
	sigset_t now;

	resolve();
	if (!sdsm_shim_role || !shim_job)
		return real_create(tp, attr, fn, arg);
	if (attr)
		pthread_attr_getdetachstate(attr, &detach);
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	t = slot_claim((uintptr_t)fn, (uintptr_t)arg,
		       detach == PTHREAD_CREATE_DETACHED, mask_of(&now));
	if (!t) {
		threads_full();
		return EAGAIN;
	}
	t->stack = stack_len(attr);
	shim_rc_sync();		/* a release of what the thread may read */
	node = place();
	t->node = node;
	*tp = (pthread_t)t;
	if ((int)node == my_node) {
		__atomic_store_n(&t->state, SHIM_T_RUNNING, __ATOMIC_SEQ_CST);
		ret = spawn(t);
		if (ret)
			__atomic_store_n(&t->state, SHIM_T_FREE,
					 __ATOMIC_SEQ_CST);
		return ret;
	}
	__atomic_store_n(&t->state, SHIM_T_NEW, __ATOMIC_SEQ_CST);
	kick(node);
	return 0;
}

/*
 * Join @t, waiting until @clock reads @abstime (NULL: for ever; @try: not
 * at all).  Waits are cut in 0.5 s slices: a state change is never missed
 * for longer than that even if a wake-up is.
 */
static int join(struct shim_thread *t, void **retval, bool try,
		clockid_t clock, const struct timespec *abstime)
{
	struct timespec now;
	int64_t left;
	uint32_t st;

	if (t == cur_thread)
		return EDEADLK;
	if (abstime && (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000 * MS))
		return EINVAL;
	for (;;) {
		st = __atomic_load_n(&t->state, __ATOMIC_SEQ_CST);
		if (st == SHIM_T_EXITED)
			break;
		if (st == SHIM_T_FREE || t->detached)
			return EINVAL;
		if (try)
			return EBUSY;
		left = 500 * MS;
		if (abstime) {
			clock_gettime(clock, &now);
			left = (abstime->tv_sec - now.tv_sec) * 1000 * MS +
			       (abstime->tv_nsec - now.tv_nsec);
			if (left <= 0)
				return ETIMEDOUT;
			if (left > 500 * MS)
				left = 500 * MS;
		}
		sdsm_futex_wait(&t->state, st, left);
	}
	shim_rc_sync();		/* an acquire of the thread's writes */
	if (retval)
		*retval = (void *)(uintptr_t)t->ret;
	__atomic_store_n(&t->state, SHIM_T_FREE, __ATOMIC_SEQ_CST);
	return 0;
}

EXPORT int pthread_join(pthread_t th, void **retval)
{
	struct shim_thread *t = ours(th);

	resolve();
	if (!t)
		return real_join(th, retval);
	return join(t, retval, false, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_tryjoin_np(pthread_t th, void **retval)
{
	static int (*real)(pthread_t, void **);
	struct shim_thread *t = ours(th);

	if (!t) {
		if (!real)
			real = dlsym(RTLD_NEXT, "pthread_tryjoin_np");
		return real(th, retval);
	}
	return join(t, retval, true, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_clockjoin_np(pthread_t th, void **retval, clockid_t clock,
				const struct timespec *abstime)
{
	static int (*real)(pthread_t, void **, clockid_t,
			   const struct timespec *);
	struct shim_thread *t = ours(th);

	if (!t) {
		if (!real)
			real = dlsym(RTLD_NEXT, "pthread_clockjoin_np");
		return real(th, retval, clock, abstime);
	}
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return join(t, retval, false, clock, abstime);
}

EXPORT int pthread_timedjoin_np(pthread_t th, void **retval,
				const struct timespec *abstime)
{
	return pthread_clockjoin_np(th, retval, CLOCK_REALTIME, abstime);
}

/*
 * pthread_kill() and pthread_cancel() of a thread of the job: on its own
 * node, at once; elsewhere its node's loop does it (within its wake-up).
 */
EXPORT int pthread_kill(pthread_t th, int sig)
{
	struct shim_thread *t = ours(th);
	uint32_t st;

	resolve();
	if (!t)
		return real_kill(th, sig);
	if (sig < 0 || sig > 64)
		return EINVAL;
	st = __atomic_load_n(&t->state, __ATOMIC_SEQ_CST);
	if (st == SHIM_T_FREE || st == SHIM_T_CLAIMED)
		return ESRCH;
	if (!sig || st == SHIM_T_EXITED)
		return 0;
	if (t == cur_thread)
		return real_kill(real_self(), sig);
	__atomic_fetch_or(&t->sigpend, 1ULL << (sig - 1), __ATOMIC_SEQ_CST);
	kick(t->node);
	return 0;
}

/*
 * kill() of the job's process (the pid main() has, or this worker's own)
 * by a job thread on a worker: a process-directed signal, which the
 * launcher's process gets (proc_signals()), where main() runs.  Any other
 * pid is this node's.
 */
EXPORT int kill(pid_t pid, int sig)
{
	static int (*real)(pid_t, int);

	if (sdsm_shim_role == 2 && shim_job && cur_thread && pid > 0 &&
	    (pid == shim_job->launcher_pid || pid == getpid())) {
		if (sig < 0 || sig > 64) {
			errno = EINVAL;
			return -1;
		}
		if (sig) {
			__atomic_fetch_or(&shim_job->proc_sigs, 1ULL << (sig - 1),
					  __ATOMIC_SEQ_CST);
			kick(shim_job->launcher);
		}
		return 0;
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "kill");
	return real(pid, sig);
}

EXPORT int pthread_cancel(pthread_t th)
{
	struct shim_thread *t = ours(th);
	uint32_t st;

	resolve();
	if (!t)
		return real_cancel(th);
	st = __atomic_load_n(&t->state, __ATOMIC_SEQ_CST);
	if (st == SHIM_T_FREE || st == SHIM_T_CLAIMED)
		return ESRCH;
	if (st == SHIM_T_EXITED)
		return 0;
	if (t == cur_thread)
		return real_cancel(real_self());
	__atomic_store_n(&t->cancel, 1, __ATOMIC_SEQ_CST);
	kick(t->node);
	return 0;
}

EXPORT int pthread_detach(pthread_t th)
{
	struct shim_thread *t = ours(th);
	uint32_t ex = SHIM_T_EXITED;

	resolve();
	if (!t)
		return real_detach(th);
	if (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == SHIM_T_FREE)
		return ESRCH;
	__atomic_store_n(&t->detached, 1, __ATOMIC_SEQ_CST);
	__atomic_compare_exchange_n(&t->state, &ex, SHIM_T_FREE, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return 0;
}

EXPORT void pthread_exit(void *ret)
{
	struct shim_thread *t = cur_thread;

	resolve();
	if (t) {
		thread_leave(t, ret);
		real_exit(NULL);
	}
	real_exit(ret);
}

EXPORT pthread_t pthread_self(void)
{
	resolve();
	if (cur_thread)
		return (pthread_t)cur_thread;
	return real_self();
}

EXPORT int pthread_equal(pthread_t a, pthread_t b)
{
	return a == b;
}

/*
 * Thread-specific keys.  glibc keeps its keys in each process's libc, so a
 * key main() made on one node is no key in another node's process: there
 * pthread_setspecific() fails with EINVAL (CPython aborts: "Couldn't
 * create autoTSSkey mapping").  A key made while the job runs is the
 * job's, in P.c; values stay per thread (cur_spec), and a thread of the
 * job runs the destructors at its end, as glibc does, before its joiner
 * sees it ended.  glibc's keys (made before, and the preload's own) pass
 * through.
 */
/* From the preload constructor, once its own keys are made: the launcher's. */
void shim_keys_start(void)
{
	job_keys = sdsm_shim_role == 1;
}

static struct shim_key *job_key(pthread_key_t key)
{
	if (!job_keys || key < SHIM_KEY_BASE || key - SHIM_KEY_BASE >= SHIM_KEYS)
		return NULL;
	return &shim_job->keys[key - SHIM_KEY_BASE];
}

EXPORT int pthread_key_create(pthread_key_t *key, void (*destr)(void *))
{
	static int (*real)(pthread_key_t *, void (*)(void *));
	struct shim_key *k;
	uint32_t seq;
	unsigned int i;

	if (!job_keys) {
		if (!real)
			real = dlsym(RTLD_NEXT, "pthread_key_create");
		return real(key, destr);
	}
	for (i = 0; i < SHIM_KEYS; i++) {
		k = &shim_job->keys[i];
		seq = __atomic_load_n(&k->seq, __ATOMIC_SEQ_CST);
		/* In use, or its seq would wrap to a value a thread holds. */
		if ((seq & 1) || seq + 2 < seq ||
		    !__atomic_compare_exchange_n(&k->seq, &seq, seq + 1, false,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		__atomic_store_n(&k->destr, (uintptr_t)destr, __ATOMIC_SEQ_CST);
		*key = SHIM_KEY_BASE + i;
		return 0;
	}
	return EAGAIN;
}

EXPORT int pthread_key_delete(pthread_key_t key)
{
	static int (*real)(pthread_key_t);
	struct shim_key *k = job_key(key);
	uint32_t seq;

	if (!k) {
		if (!real)
			real = dlsym(RTLD_NEXT, "pthread_key_delete");
		return real(key);
	}
	seq = __atomic_load_n(&k->seq, __ATOMIC_SEQ_CST);
	if (!(seq & 1) ||
	    !__atomic_compare_exchange_n(&k->seq, &seq, seq + 1, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return EINVAL;
	return 0;
}

EXPORT void *pthread_getspecific(pthread_key_t key)
{
	static void *(*real)(pthread_key_t);
	struct shim_key *k = job_key(key);
	struct shim_spec *e;

	if (!k) {
		if (!real)
			real = dlsym(RTLD_NEXT, "pthread_getspecific");
		return real(key);
	}
	if (!cur_spec)
		return NULL;
	e = &cur_spec[k - shim_job->keys];
	if (e->seq != __atomic_load_n(&k->seq, __ATOMIC_RELAXED))
		return NULL;
	return e->val;
}

EXPORT int pthread_setspecific(pthread_key_t key, const void *val)
{
	static int (*real)(pthread_key_t, const void *);
	struct shim_key *k = job_key(key);
	struct shim_spec *e;
	uint32_t seq;

	if (!k) {
		if (!real)
			real = dlsym(RTLD_NEXT, "pthread_setspecific");
		return real(key, val);
	}
	seq = __atomic_load_n(&k->seq, __ATOMIC_RELAXED);
	if (!(seq & 1))
		return EINVAL;
	if (!cur_spec) {
		cur_spec = calloc(SHIM_KEYS, sizeof(*cur_spec));
		if (!cur_spec)
			return ENOMEM;
	}
	e = &cur_spec[k - shim_job->keys];
	e->seq = seq;
	e->val = (void *)val;
	return 0;
}

/*
 * At a job thread's end: the destructors of its non-NULL values of live
 * keys, in rounds while they set values again (glibc's
 * PTHREAD_DESTRUCTOR_ITERATIONS), then its values go.
 */
static void keys_destroy(void)
{
	struct shim_spec *e;
	struct shim_key *k;
	unsigned int i, round;
	uintptr_t destr;
	bool again = true;
	void *val;

	for (round = 0; cur_spec && again &&
	     round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
		again = false;
		for (i = 0; i < SHIM_KEYS; i++) {
			e = &cur_spec[i];
			k = &shim_job->keys[i];
			val = e->val;
			if (!val)
				continue;
			e->val = NULL;
			destr = __atomic_load_n(&k->destr, __ATOMIC_SEQ_CST);
			if (e->seq != __atomic_load_n(&k->seq, __ATOMIC_SEQ_CST) ||
			    !destr)
				continue;
			((void (*)(void *))destr)(val);
			again = true;
		}
	}
	free(cur_spec);
	cur_spec = NULL;
}

/*
 * The other calls that take a pthread_t are glibc's, given the glibc handle
 * of the job's thread @th: the caller's own; another thread of this
 * process, under stacks.lock (*@held), while its glibc thread is not yet
 * reaped (a reaped one's stack may already carry another thread); a thread
 * of another node is out of reach and the call is refused, naming it;
 * main()'s is its initial thread's.  A handle that is not the job's
 * (threads glibc made, main()'s if the table was full) is passed on.
 */
static int thread_get(pthread_t th, const char *call, pthread_t *real,
		      bool *held)
{
	struct shim_thread *t = ours(th);
	unsigned int i;

	*held = false;
	*real = th;
	if (!t)
		return 0;
	if (slot_unused(t))
		return ESRCH;
	if (t == cur_thread) {
		*real = real_self();
		return 0;
	}
	if (t == main_thread) {		/* the initial thread: never reaped */
		*real = (pthread_t)t->real;
		return 0;
	}
	if (t->node != (uint32_t)my_node) {
		shim_say(SHIM_REMOTE_FMT, call, t->node);
		return ENOTSUP;
	}
	*real = (pthread_t)__atomic_load_n(&t->real, __ATOMIC_ACQUIRE);
	if (!*real)
		return ESRCH;	/* not started yet */
	pthread_mutex_lock(&stacks.lock);
	for (i = 0; i < stacks.nr_live; i++) {
		if (pthread_equal(stacks.live[i].real, *real)) {
			*held = true;
			return 0;
		}
	}
	pthread_mutex_unlock(&stacks.lock);
	return ESRCH;
}

/* After thread_get() (and the call it let through). */
static void thread_put(bool held)
{
	if (held)
		pthread_mutex_unlock(&stacks.lock);
}

#define UNPAREN(...)	__VA_ARGS__

/* int NAME(pthread_t th, PARAMS...): glibc's, on thread_get()'s handle. */
#define ON_THREAD(name, params, ...)					\
EXPORT int name(pthread_t th, UNPAREN params)				\
{									\
	static int (*real)(pthread_t, UNPAREN params);			\
	pthread_t h;							\
	bool held;							\
	int ret;							\
									\
	resolve();							\
	if (!real)							\
		real = dlsym(RTLD_NEXT, #name);				\
	ret = thread_get(th, #name "()", &h, &held);			\
	if (!ret)							\
		ret = real(h, __VA_ARGS__);				\
	thread_put(held);						\
	return ret;							\
}

ON_THREAD(pthread_setname_np, (const char *name), name)
ON_THREAD(pthread_getname_np, (char *buf, size_t len), buf, len)
ON_THREAD(pthread_getattr_np, (pthread_attr_t *attr), attr)
ON_THREAD(pthread_getcpuclockid, (clockid_t *clock), clock)
ON_THREAD(pthread_sigqueue, (int sig, const union sigval val), sig, val)
ON_THREAD(pthread_setschedprio, (int prio), prio)
ON_THREAD(pthread_setschedparam, (int policy, const struct sched_param *p),
	  policy, p)
ON_THREAD(pthread_getschedparam, (int *policy, struct sched_param *p),
	  policy, p)

/* Whether @p is the job's memory, where futex(2) is the job's. */
bool shim_job_mem(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	return (a >= SHIM_CTL_ADDR && a < shim_heap_base(SDSM_MAX_NODES)) ||
	       (a >= shim_job->globals_addr &&
		a - shim_job->globals_addr < shim_job->globals_len);
}

/*
 * A robust or priority-inheritance mutex in the job's memory is refused,
 * naming the call: the kernel's robust-list clean-up at a thread's exit
 * and its PI futex operations know one node only.  Elsewhere (a library's
 * own data) the mutex is the process's own, as outside a job.
 */
EXPORT int pthread_mutex_init(pthread_mutex_t *m,
			      const pthread_mutexattr_t *attr)
{
	static int (*real)(pthread_mutex_t *, const pthread_mutexattr_t *);
	int robust = PTHREAD_MUTEX_STALLED, proto = PTHREAD_PRIO_NONE;

	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_mutex_init");
	if (!sdsm_shim_role || !shim_job || !attr || !shim_job_mem(m))
		return real(m, attr);
	pthread_mutexattr_getrobust(attr, &robust);
	pthread_mutexattr_getprotocol(attr, &proto);
	if (robust == PTHREAD_MUTEX_ROBUST || proto == PTHREAD_PRIO_INHERIT) {
		shim_say("pthread_mutex_init() of a %s mutex is not supported in a job over several nodes (sdsmctl -N): the kernel's robust and priority-inheritance futexes know one node only",
			 robust == PTHREAD_MUTEX_ROBUST ?
			 "robust" : "priority-inheritance");
		return ENOTSUP;
	}
	return real(m, attr);
}

/*
 * A page of the job lost with a node that died (every access to it fails,
 * SIGBUS): say so, naming the nodes down, and end with 125.  A SIGBUS
 * elsewhere keeps its default action.  The handler touches no job memory
 * (a second SIGBUS in it would kill silently): the globals' bounds are
 * copied here first.
 */
static uintptr_t globals_lo, globals_hi;
static bool in_sigbus;

/*
 * Say @msg (@n bytes of @size) and the nodes of the job that are down, and
 * end with 125.  Async-signal-safe; touches no job memory.
 */
__attribute__((noreturn))
static void end_lost(char *msg, int n, size_t size)
{
	const struct timespec step = { 0, 20 * 1000 * 1000 };
	unsigned int i, t;
	bool down = false;

	/*
	 * A node shows down once its loss is handled, and that handling is
	 * what failed our access: give it up to 2 s to show.
	 */
	for (t = 0; t < 100 && !down; t++) {
		for (i = 0; i < place_n && !down; i++)
			down = shim_node_down(place_list[i]);
		if (!down)
			nanosleep(&step, NULL);
	}
	n += snprintf(msg + n, size - n, " (nodes down:");
	for (i = 0; i < place_n && n < (int)size - 40; i++)
		if (shim_node_down(place_list[i]))
			n += snprintf(msg + n, size - n, " %u", place_list[i]);
	n += snprintf(msg + n, size - n, "); the job ends\n");
	if (write(shim_stderr(), msg, n) < 0)
		n = 0;
	_exit(125);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	char msg[160];
	int n;

	(void)uc;
	if (!((a >= SHIM_CTL_ADDR && a < shim_heap_base(SDSM_MAX_NODES)) ||
	      (a >= globals_lo && a < globals_hi))) {
		signal(sig, SIG_DFL);
		return;		/* the fault repeats, with the default action */
	}
	n = snprintf(msg, sizeof(msg),
		     "sdsm: node %d: memory at %#lx is lost",
		     my_node, (unsigned long)a);
	/* SA_NODEFER: a second SIGBUS (another lost page) comes back here. */
	if (__atomic_exchange_n(&in_sigbus, true, __ATOMIC_SEQ_CST))
		place_n = 0;
	end_lost(msg, n, sizeof(msg));
}

/*
 * A futex(2) on job memory failed because the word's memory is gone
 * (SIGSYS handler): its home is down, its page's data is lost, or its
 * page could not be brought here.  glibc would abort ("unexpected error
 * code"); end as a lost page does instead.
 */
void shim_futex_lost(const void *addr, int err)
{
	char msg[200];
	int n;

	n = snprintf(msg, sizeof(msg), "sdsm: node %d: futex at %p: %s",
		     my_node, addr, strerror(err));
	end_lost(msg, n, sizeof(msg));
}

static void catch_sigbus(void)
{
	struct sigaction sa;

	globals_lo = shim_job->globals_addr;
	globals_hi = shim_job->globals_addr + shim_job->globals_len;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* ---- the end of the job ---- */

/*
 * Write out what node's sdsmd put in ring @r.  The launcher's service
 * thread calls this every turn: it writes the ring's page only when there
 * was something, since each write takes the page from the nodes that read
 * it (the node's loop reads its words and the thread table beside them).
 */
static void drain_ring(struct shim_ring *r, int fd)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->tail;
	ssize_t n;

	if (tail == head)
		return;
	while (tail != head) {
		size_t off = tail % SHIM_RING, len = head - tail;

		if (len > SHIM_RING - off)
			len = SHIM_RING - off;
		n = write(fd, r->data + off, len);
		if (n <= 0)
			break;
		tail += n;
	}
	__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
}

static void drain_all(void)
{
	unsigned int i;

	pthread_mutex_lock(&drain_lock);
	for (i = 0; i < place_n; i++) {
		drain_ring(&shim_job->node[place_list[i]].out, 1);
		drain_ring(&shim_job->node[place_list[i]].err_ring, 2);
	}
	pthread_mutex_unlock(&drain_lock);
}

static bool remote(unsigned int k)
{
	return (int)k != my_node;
}

/* Workers end; wait (bounded) until their output is in. */
static void end_workers(void)
{
	struct timespec t0, t;
	unsigned int i, k;
	bool all;

	__atomic_store_n(&shim_job->state, SHIM_JOB_ENDING, __ATOMIC_SEQ_CST);
	for (i = 0; i < place_n; i++) {
		k = place_list[i];
		if (!remote(k))
			continue;
		__atomic_add_fetch(&shim_job->node[k].wseq, 1,
				   __ATOMIC_SEQ_CST);
		sdsm_futex_wake(&shim_job->node[k].wseq, 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t ev = __atomic_load_n(&shim_job->event,
					      __ATOMIC_SEQ_CST);

		drain_all();
		all = true;
		for (i = 0; i < place_n; i++) {
			uint32_t st = __atomic_load_n(&shim_job->node[place_list[i]].state,
						      __ATOMIC_ACQUIRE);

			if (remote(place_list[i]) && st != SHIM_NODE_DONE &&
			    st != SHIM_NODE_FAILED && st != SHIM_NODE_NONE)
				all = false;
		}
		if (all)
			break;
		sdsm_futex_wait(&shim_job->event, ev, 50 * MS);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	drain_all();
}

static void launcher_atexit(void)
{
	if (__atomic_exchange_n(&ending, true, __ATOMIC_SEQ_CST))
		return;
	fflush(NULL);
	end_workers();
}

static void __attribute__((noreturn)) die_by(int sig)
{
	struct rlimit nocore = { 0, 0 };
	struct sigaction sa;
	sigset_t set;

	/* The worker dumped (or not) its core; this one is no news. */
	setrlimit(RLIMIT_CORE, &nocore);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* A worker ended on its own: end the job like a shell would report it. */
static void worker_gone(unsigned int k, int status)
{
	if (__atomic_exchange_n(&ending, true, __ATOMIC_SEQ_CST))
		return;		/* the job ends already */
	fflush(NULL);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		shim_say("node %u: worker (pid %d) killed by signal %d (%s)", k,
			 shim_job->node[k].pid, sig, strsignal(sig));
		end_workers();
		die_by(sig);
	}
	shim_say("node %u: worker exited with status %d", k,
		 WEXITSTATUS(status));
	end_workers();
	_exit(WEXITSTATUS(status));
}

/*
 * A node of the job is down: its threads are gone and the pages it held
 * modified are lost, so the job cannot go on.  End at once: the job's
 * regions go with the launcher, and every supervisor then kills its
 * worker.  The output of the workers not yet drained is lost.
 */
static void check_nodes(void)
{
	unsigned int i, k;

	for (i = 0; i < place_n; i++) {
		k = place_list[i];
		if (!remote(k) || !shim_node_down(k))
			continue;
		if (__atomic_exchange_n(&ending, true, __ATOMIC_SEQ_CST))
			return;
		fflush(NULL);
		shim_say("node %u is down; the job ends", k);
		_exit(125);
	}
}

/*
 * The signals threads on other nodes sent the job's process (kill()),
 * sent to this process: the kernel hands each to a thread of it that
 * does not block it, or keeps it pending.  This thread blocks them all.
 */
static void proc_signals(void)
{
	uint64_t sigs;
	int sig;

	if (!__atomic_load_n(&shim_job->proc_sigs, __ATOMIC_ACQUIRE))
		return;
	sigs = __atomic_exchange_n(&shim_job->proc_sigs, 0, __ATOMIC_SEQ_CST);
	for (sig = 1; sig <= 64; sig++)
		if (sigs >> (sig - 1) & 1)
			kill(getpid(), sig);
}

/*
 * The launcher's service thread sleeps until a node wakes it (a thread
 * placed here, a passed-on call, output in a ring, exit(), kill(), a
 * worker's end) or a turn passes: what comes without a wake (a node down,
 * the remote frees this process batched, signal dispositions set
 * elsewhere) waits for the turn.  Each wake-up takes the CPU from the
 * job's threads on this node: at 20 ms, pmatmul's thread on the
 * launcher's node lost 3-4 % of its time under TCG.  A worker's loop
 * (worker_main()) has the same turn.
 */
#define SHIM_SERVICE_TURN	(200 * MS)
#define SHIM_CHECK_NODES	(500 * MS)	/* a node down: said by then */

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *service(void *arg)
{
	int64_t checked = 0, now;
	uint32_t served = 0;
	sigset_t all;
	unsigned int i, k, n;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (n = 0;; n++) {
		uint32_t ev, req, seq;

		/* Before touching what a dead node may have held. */
		now = mono_ns();
		if (now - checked >= SHIM_CHECK_NODES) {
			check_nodes();
			checked = now;
		}
		ev = __atomic_load_n(&shim_job->event, __ATOMIC_SEQ_CST);
		sdsm_futex_wait(&shim_job->event, ev, SHIM_SERVICE_TURN);
		if (__atomic_load_n(&ending, __ATOMIC_SEQ_CST))
			continue;
		/* Threads placed here by other nodes; their requests. */
		seq = __atomic_load_n(&shim_job->node[my_node].wseq,
				      __ATOMIC_SEQ_CST);
		if (seq != served || shim_job->sig_gen != sig_gen_seen ||
		    n % 5 == 0) {
			served = seq;
			serve_threads();
		}
		drain_all();
		shim_fd_serve();
		shim_flush_remote();
		proc_signals();
		req = __atomic_load_n(&shim_job->exit_req, __ATOMIC_SEQ_CST);
		if (req)
			exit(req & 0xff);
		for (i = 0; i < place_n; i++) {
			k = place_list[i];
			if (!remote(k))
				continue;
			if (__atomic_load_n(&shim_job->node[k].state,
					    __ATOMIC_ACQUIRE) == SHIM_NODE_DONE)
				worker_gone(k, shim_job->node[k].status);
		}
	}
	return NULL;
}

/* Ask sdsmd on node @k for a worker. */
static int post(unsigned int k)
{
	char name[SDSM_NAME_MAX];
	struct shim_inbox *in;
	struct timespec t0, t;
	uint32_t seq;
	int ret = -ETIMEDOUT;

	shim_inbox_name(name, k);
	in = sdsm_region_open(name, NULL);
	if (!in && errno == EACCES) {
		/* sdsmd's inbox is root's, mode 0600: its workers run as root. */
		shim_say("node %u: sdsmd takes jobs from root only: %s", k,
			 sdsm_last_error());
		return -EACCES;
	}
	if (!in) {
		shim_say("node %u: no sdsmd running there (no region %s): %s",
			 k, name, sdsm_last_error());
		return -ENOENT;
	}
	if (sdsm_lock_timeout(SHIM_INBOX_LOCK + k, 10000) < 0) {
		shim_say("node %u: inbox %s busy: %s", k, name,
			 sdsm_last_error());
		goto out;
	}
	memcpy(in->job, shim_job->prefix, sizeof(in->job));
	__atomic_store_n(&shim_job->node[k].state, SHIM_NODE_POSTED,
			 __ATOMIC_SEQ_CST);
	seq = __atomic_add_fetch(&in->seq, 1, __ATOMIC_SEQ_CST);
	sdsm_futex_wake(&in->seq, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t ack = __atomic_load_n(&in->ack, __ATOMIC_SEQ_CST);

		if (ack == seq) {
			ret = 0;
			break;
		}
		sdsm_futex_wait(&in->ack, ack, 200 * MS);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	sdsm_unlock(SHIM_INBOX_LOCK + k);
	if (ret)
		shim_say("node %u: sdsmd did not answer in 10 s", k);
out:
	sdsm_region_unmap(in, 4096);
	return ret;
}

/* Workers started and mapped, or a message and an exit status. */
static int start_workers(void)
{
	struct timespec t0, t;
	unsigned int i, k;
	bool all;
	int ret;

	for (i = 0; i < place_n; i++) {
		k = place_list[i];
		if (!remote(k))
			continue;
		ret = post(k);
		if (ret)
			return 125;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		uint32_t ev = __atomic_load_n(&shim_job->event,
					      __ATOMIC_SEQ_CST);

		drain_all();
		all = true;
		for (i = 0; i < place_n; i++) {
			struct shim_node *n = &shim_job->node[place_list[i]];
			uint32_t st = __atomic_load_n(&n->state,
						      __ATOMIC_ACQUIRE);

			if (!remote(place_list[i]))
				continue;
			if (st == SHIM_NODE_FAILED) {
				shim_say("node %u: cannot run %s: %s",
					 place_list[i], shim_job->exe,
					 strerror(n->err));
				return 127;
			}
			if (st == SHIM_NODE_DONE) {
				shim_say("node %u: worker ended at start (status 0x%x)",
					 place_list[i], n->status);
				return 127;
			}
			if (st != SHIM_NODE_READY)
				all = false;
		}
		if (all)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 60) {
			shim_say("workers not ready after 60 s");
			return 125;
		}
		sdsm_futex_wait(&shim_job->event, ev, 50 * MS);
	}
}

/* The worker's main(): map the globals, serve threads until the end. */
extern int shim_map_globals(uintptr_t addr, size_t len, const char *name);

static int worker_main(int argc, char **argv, char **envp)
{
	struct shim_node *n = &shim_job->node[my_node];
	char name[SDSM_NAME_MAX];

	(void)argc;
	(void)argv;
	(void)envp;
	resolve();
	snprintf(name, sizeof(name), "%.24s.g", shim_job->prefix);
	if (shim_map_globals(shim_job->globals_addr, shim_job->globals_len,
			     name))
		_exit(127);
	job_keys = true;
	shim_fd_worker_init();
	if (shim_futex_trap_init(shim_job->globals_addr,
				 shim_job->globals_addr +
				 shim_job->globals_len, shim_job->fd_limit))
		_exit(125);
	catch_sigbus();
	setvbuf(stdout, NULL, _IOLBF, 0);
	n->ncpus = local_cpus();
	__atomic_store_n(&n->state, SHIM_NODE_READY, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&shim_job->event, 1, __ATOMIC_SEQ_CST);
	sdsm_futex_wake(&shim_job->event, 1);
	for (;;) {
		uint32_t seq = __atomic_load_n(&n->wseq, __ATOMIC_SEQ_CST);

		if (__atomic_load_n(&shim_job->state, __ATOMIC_SEQ_CST) ==
		    SHIM_JOB_ENDING) {
			fflush(NULL);
			_exit(0);
		}
		serve_threads();
		shim_flush_remote();
		sdsm_futex_wait(&n->wseq, seq, SHIM_SERVICE_TURN);
	}
}

/* exit() on a worker: the launcher exits, with that status. */
EXPORT void exit(int status)
{
	static void (*real)(int) __attribute__((noreturn));

	if (!real)
		real = dlsym(RTLD_NEXT, "exit");
	if (sdsm_shim_role == 2 && shim_job &&
	    __atomic_load_n(&shim_job->node[my_node].state, __ATOMIC_SEQ_CST) ==
	    SHIM_NODE_READY) {
		uint32_t zero = 0;

		fflush(NULL);
		__atomic_compare_exchange_n(&shim_job->exit_req, &zero,
					    0x100 | (status & 0xff), false,
					    __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&shim_job->event, 1, __ATOMIC_SEQ_CST);
		sdsm_futex_wake(&shim_job->event, 1);
		for (;;)
			pause();	/* the launcher ends this process */
	}
	real(status);
}

/* ---- CPUs: those of the job's nodes ---- */

/*
 * The CPUs online on the job's nodes as its workers counted them, or 0
 * outside a job or before every worker is ready.
 */
static int job_cpus_ready(void)
{
	unsigned int i;
	int sum = 0;

	if (!sdsm_shim_role || !shim_job)
		return 0;
	for (i = 0; i < place_n; i++) {
		struct shim_node *n = &shim_job->node[place_list[i]];
		uint32_t c = __atomic_load_n(&n->ncpus, __ATOMIC_ACQUIRE);

		if (!c)
			return 0;	/* a worker not ready yet */
		sum += c;
	}
	return sum;
}

/*
 * The CPUs online on the nodes of SDSM_CPUNODES as their sdsmd counted
 * them at its start (struct shim_inbox.ncpus), this node's own asked of
 * glibc: what a job is told before its workers are ready.  Libraries
 * size their thread pools in their constructors, which run before this
 * library's (libgomp's before anything of the job exists, so OpenMP's
 * default team would be one node's).  Counted once; 0 outside a job, or
 * when a node's sdsmd cannot be read (the job then fails to start).
 */
static int job_cpus_early(void)
{
	static int counted = -1;
	const char *nodes = getenv("SDSM_CPUNODES");
	uint64_t mask = 0;
	int sum = 0, me, k, n;

	n = __atomic_load_n(&counted, __ATOMIC_ACQUIRE);
	if (n >= 0)
		return n;
	if (shim_job)
		mask = shim_job->nodemask;
	else if (!nodes || !*nodes ||
		 sdsm_parse_nodemask(nodes, sdsm_num_nodes(), &mask) < 0)
		mask = 0;
	me = mask ? sdsm_node_id() : -1;
	for (k = 0; k < SDSM_MAX_NODES && mask; k++) {
		struct shim_inbox *in;
		char name[SDSM_NAME_MAX];
		size_t len;

		if (!(mask >> k & 1))
			continue;
		if (k == me) {
			sum += local_cpus();
			continue;
		}
		shim_inbox_name(name, k);
		in = sdsm_region_open(name, &len);
		n = in ? (int)__atomic_load_n(&in->ncpus, __ATOMIC_ACQUIRE) : 0;
		if (in)
			sdsm_region_unmap(in, len);
		if (n <= 0) {
			sum = 0;
			break;
		}
		sum += n;
	}
	__atomic_store_n(&counted, sum, __ATOMIC_RELEASE);
	return sum;
}

/* The CPUs online on the job's nodes, or 0 outside a job. */
static int job_cpus(void)
{
	int n = job_cpus_ready();

	return n > 0 ? n : job_cpus_early();
}

EXPORT long sysconf(int name)
{
	static long (*real)(int);
	int n;

	if ((name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) &&
	    (n = job_cpus()) > 0)
		return n;
	if (!real)
		real = dlsym(RTLD_NEXT, "sysconf");
	return real(name);
}

EXPORT int get_nprocs(void)
{
	static int (*real)(void);
	int n = job_cpus();

	if (n > 0)
		return n;
	if (!real)
		real = dlsym(RTLD_NEXT, "get_nprocs");
	return real();
}

EXPORT int get_nprocs_conf(void)
{
	static int (*real)(void);
	int n = job_cpus();

	if (n > 0)
		return n;
	if (!real)
		real = dlsym(RTLD_NEXT, "get_nprocs_conf");
	return real();
}

/* The process (and its threads) may run on every CPU of the job. */
EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	static int (*real)(pid_t, size_t, cpu_set_t *);
	int n = job_cpus(), i;

	if (n > 0 && (pid == 0 || pid == getpid())) {
		if ((size_t)n > size * 8) {
			errno = EINVAL;
			return -1;
		}
		CPU_ZERO_S(size, set);
		for (i = 0; i < n; i++)
			CPU_SET_S(i, size, set);
		return 0;
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "sched_getaffinity");
	return real(pid, size, set);
}

/*
 * A thread stays on the node it was placed on; within it, the job's CPUs
 * are numbered as sched_getaffinity() shows them (node after node of the
 * job, in node order).  @set (job numbering) to this node's own CPUs in
 * @local: -EINVAL if it has none of them.
 */
static int local_cpuset(size_t size, const cpu_set_t *set, cpu_set_t *local)
{
	int base = 0, n = 0, c, ncpus;
	unsigned int i;

	for (i = 0; i < place_n && place_list[i] != (unsigned int)my_node; i++)
		base += __atomic_load_n(&shim_job->node[place_list[i]].ncpus,
					__ATOMIC_ACQUIRE);
	if (i == place_n)
		return -EINVAL;		/* the launcher, not in the list */
	ncpus = local_cpus();
	CPU_ZERO(local);
	for (c = 0; c < ncpus && c < CPU_SETSIZE; c++) {
		if ((size_t)(base + c) < size * 8 &&
		    CPU_ISSET_S(base + c, size, set)) {
			CPU_SET(c, local);
			n++;
		}
	}
	return n ? 0 : -EINVAL;
}

EXPORT int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	static int (*real)(pid_t, size_t, const cpu_set_t *);
	cpu_set_t local;
	int ret;

	if (!real)
		real = dlsym(RTLD_NEXT, "sched_setaffinity");
	if (job_cpus_ready() <= 0 || (pid && pid != gettid()))
		return real(pid, size, set);
	ret = local_cpuset(size, set, &local);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return real(0, sizeof(local), &local);
}

EXPORT int pthread_getaffinity_np(pthread_t th, size_t size, cpu_set_t *set)
{
	static int (*real)(pthread_t, size_t, cpu_set_t *);
	struct shim_thread *t = ours(th);
	bool held = false;
	pthread_t h;
	int ret;

	resolve();
	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_getaffinity_np");
	if (job_cpus() > 0) {
		if (t && slot_unused(t))
			return ESRCH;
		return sched_getaffinity(0, size, set) ? errno : 0;
	}
	/* Outside a job, or before every worker is ready: glibc's. */
	ret = thread_get(th, "pthread_getaffinity_np()", &h, &held);
	if (!ret)
		ret = real(h, size, set);
	thread_put(held);
	return ret;
}

EXPORT int pthread_setaffinity_np(pthread_t th, size_t size,
				  const cpu_set_t *set)
{
	static int (*real)(pthread_t, size_t, const cpu_set_t *);
	bool held = false;
	cpu_set_t local;
	pthread_t h;
	int ret = 0;

	resolve();
	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_setaffinity_np");
	if (job_cpus_ready() > 0) {
		ret = -local_cpuset(size, set, &local);
		set = &local;
		size = sizeof(local);
	}
	if (!ret)
		ret = thread_get(th, "pthread_setaffinity_np()", &h, &held);
	if (!ret)
		ret = real(h, size, set);
	thread_put(held);
	return ret;
}

/* main() on a stack in sdsm memory. */
static int (*app_main)(int, char **, char **);
static int app_argc, app_ret;
static char **app_argv, **app_envp;
static ucontext_t main_uc, app_uc;

/*
 * main() is a thread of the job too: an entry of the table on the
 * launcher's node, whose real thread is the process's initial thread, so
 * that pthread_self() in main() is a handle every node understands
 * (pthread_kill(), pthread_cancel() and pthread_join() of it from a thread
 * on another node, pthread_equal()).  Without a free entry main() keeps
 * glibc's handle, valid on the launcher's node only.
 */
static void main_thread_claim(void)
{
	struct shim_thread *t = slot_claim(0, 0, false, 0);

	if (!t)
		return;
	__atomic_store_n(&t->real, (uintptr_t)real_self(), __ATOMIC_RELEASE);
	__atomic_store_n(&t->state, SHIM_T_RUNNING, __ATOMIC_SEQ_CST);
	thread_here(t, true);
	main_thread = t;
	cur_thread = t;
}

static void run_app(void)
{
	pthread_cleanup_push(cancelled, main_thread);
	app_ret = app_main(app_argc, app_argv, app_envp);
	pthread_cleanup_pop(0);
}

static int launcher_main(int argc, char **argv, char **envp)
{
	void *stack;
	int ret;

	resolve();
	if (shim_futex_trap_init(shim_job->globals_addr,
				 shim_job->globals_addr +
				 shim_job->globals_len, 0))
		_exit(125);
	catch_sigbus();
	ret = start_workers();
	if (ret) {
		__atomic_store_n(&ending, true, __ATOMIC_SEQ_CST);
		end_workers();
		_exit(ret);
	}
	atexit(launcher_atexit);
	{
		pthread_t tid;

		if (real_create(&tid, NULL, service, NULL)) {
			shim_say("cannot start the service thread");
			_exit(125);
		}
	}
	app_argc = argc;
	app_argv = argv;
	app_envp = envp;
	/*
	 * argv in sdsm memory: a worker's initial stack differs from ours,
	 * so a global pointing into ours must not lead there.
	 */
	{
		char **av = malloc((argc + 1) * sizeof(*av));
		int i;

		for (i = 0; av && i < argc; i++) {
			av[i] = strdup(argv[i]);
			if (!av[i])
				break;
		}
		if (av && i == argc) {
			av[argc] = NULL;
			app_argv = av;
		}
	}
	main_thread_claim();
	stack = stack_alloc(SHIM_MAIN_STACK);
	if (!stack || getcontext(&app_uc) < 0)
		return app_main(argc, app_argv, envp);
	app_uc.uc_stack.ss_sp = stack;
	app_uc.uc_stack.ss_size = SHIM_MAIN_STACK;
	app_uc.uc_link = &main_uc;
	makecontext(&app_uc, run_app, 0);
	if (swapcontext(&main_uc, &app_uc) < 0)
		return app_main(argc, app_argv, envp);
	return app_ret;
}

typedef int (*main_fn)(int, char **, char **);

EXPORT int __libc_start_main(main_fn main, int argc, char **argv,
			     void (*init)(void), void (*fini)(void),
			     void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(main_fn, int, char **, void (*)(void), void (*)(void),
		    void (*)(void), void *);

	real = dlsym(RTLD_NEXT, "__libc_start_main");
	if (sdsm_shim_role == 1) {
		app_main = main;
		main = launcher_main;
	} else if (sdsm_shim_role == 2) {
		main = worker_main;
	}
	return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}
