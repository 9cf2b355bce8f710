// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm coherent memory: mmap of /dev/sdsm, the page-fault path, and the glue
 * that runs the coherence protocol (sdsm_proto.c) over the transport.
 *
 * Mappings.  Every open file of /dev/sdsm gets its f_mapping pointed at one
 * address_space owned by the module (an inode of a private pseudo file
 * system, as DRM does), so unmap_mapping_range() on it removes a page from
 * every process of this node, forked children included, and returns only
 * when their TLBs are clean.  VMAs are VM_PFNMAP: a fault inserts the pfn of
 * this node's copy of the page with vmf_insert_pfn_prot(), read-only unless
 * the node holds the page modified.  A write to a read-only PTE arrives in
 * pfn_mkwrite, which upgrades through the protocol and replaces the PTE
 * under the page's lock (zap, insert), so a PTE can never turn writable
 * after an invalidation raced with the upgrade.  VM_PFNMAP (not MIXEDMAP)
 * because the copies are never page-cache pages, nothing should take
 * references to them (no GUP), and the core then calls pfn_mkwrite.
 *
 * Pages.  struct sdsm_page holds the node side and the home side of one
 * page; a hashed mutex (sdsm_page_lock) serializes every protocol call,
 * every PTE insertion and every zap of that page.  Lock order: mmap_lock
 * (read, fault path) -> page mutex -> i_mmap_rwsem (unmap_mapping_range).
 * Nothing takes a page mutex with i_mmap_rwsem held, and nothing waits for
 * a message with a page mutex held.  Fault-around only tries page mutexes,
 * under a page table's lock (sdsm_around_pte()).
 *
 * Messages.  The protocol's send action only queues, in the destination's
 * send queue of the messaging layer (sdsm_queue(), sdsm_cluster.c), whose
 * work item sleeps for a send credit or, for this node, hands the message
 * to the local handler.  Queueing under the page mutex keeps
 * the protocol's per-pair FIFO order and means no page mutex is held while
 * the transport waits.  A grant with data carries the home copy itself,
 * referenced until sent (no copy, no allocation), and one a message or
 * this node's read copy still holds is replaced rather than written
 * (sdsm_home_copy_own()).  The home copy is this node's own copy, one
 * reference each, after a FETCH of it (sdsm_op_own_fetch()): mapped
 * read-only until the node writes again, which it may only once every
 * other copy, and every grant that carried this one, is gone or
 * delivered (the write's INV_ACKs come after them on the same links); in
 * state MODIFIED the home copy is stale anyway.  A node's DATA carries a
 * snapshot of its copy,
 * which may be mapped.  A page that is all zero (a home copy never
 * written) travels as a flag instead of 4 KiB.
 *
 * Faults wait on a hashed waitqueue.  With FAULT_FLAG_ALLOW_RETRY the mmap
 * lock is dropped while waiting and the fault returns VM_FAULT_RETRY (as
 * handle_userfault() does), so munmap and exit never wait for the network.
 * Every wait is killable and bounded: a request unanswered for
 * fault_timeout_ms fails the faults waiting for it with SIGBUS, as does a
 * page whose home is down (the protocol's DEAD state, sticky) or whose data
 * was lost with its owner (NACK EIO, sticky).
 *
 * Holds.  A grant's copy is held until a local fault used it: an INV or
 * FETCH arriving before that is deferred by the protocol and answered from
 * sdsm_hold_work, SDSM_HOLD_RESUMED_NS after the thread whose fault used
 * it went back to user space (where its access is the next instruction),
 * at the latest SDSM_HOLD_USED_JIFFIES after that fault installed its
 * PTE, or SDSM_HOLD_MS after it was deferred if no fault comes (the
 * waiter was killed or timed out).  Documentation/protocol.rst,
 * "Progress".
 *
 * Memory.  Every page copy (node copy, home copy, the snapshot a message
 * carries) and every chunk of page state is charged to a memory cgroup
 * (__GFP_ACCOUNT), so a process cannot make the kernel grow past its
 * memory.max through sdsm.  A fault allocates the node copy it needs in
 * the faulting task before it sends a request (the spare: struct
 * sdsm_page.copy with SDSM_PAGE_SPARE; none on the home for a grant of
 * the home copy itself, sdsm_fault_wants_spare()), or takes it from the
 * spare pool, which allocated it for that task's cgroup ahead of time
 * (sdsm_spare_get()):
 * charged to that task's cgroup after the cgroup's reclaim, without its
 * OOM killer (__GFP_RETRY_MAYFAIL: killing a process frees none of the
 * copies, which belong to the region), and if the charge fails the fault
 * fails with SIGBUS, as a hugetlb fault without a page does, having sent
 * nothing and changed nothing.  A handler runs with set_active_memcg() of the region's memcg
 * (the first process of this node that mapped it): page state for a
 * request it cannot allocate is answered NACK(ENOMEM), which fails the
 * requester's fault once with SIGBUS and loses nothing.  What the protocol
 * already committed to (the data of a grant or a FETCH, a home copy) cannot
 * fail and is charged with __GFP_NOFAIL, over the memcg's limit if need be
 * but without its OOM killer (sdsm_copy_alloc_nofail()): at most a page per
 * message in flight.
 *
 * A peer reported DOWN is dead for the protocol: queued messages to it are
 * dropped, pages homed there become DEAD, directories here forget its
 * copies.  When it comes back it starts from scratch (regions are resent).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/hash.h>
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "sdsm_mem.h"
#include "sdsm_stats.h"
#include "sdsm_trace.h"

unsigned int sdsm_fault_timeout_ms = 10000;
module_param_named(fault_timeout_ms, sdsm_fault_timeout_ms, uint, 0444);
MODULE_PARM_DESC(fault_timeout_ms,
		 "ms a fault or a cluster-wide region operation waits for an answer (100..600000, default 10000)");

#define SDSM_PREFETCH_MAX	64
/* Pages a read fault maps around itself: 64 KiB, fault_around_bytes. */
#define SDSM_FAULT_AROUND	16
static unsigned int prefetch_pages = 8;

static int sdsm_prefetch_pages_set(const char *val,
				   const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, SDSM_PREFETCH_MAX);
}

static const struct kernel_param_ops sdsm_prefetch_pages_ops = {
	.set = sdsm_prefetch_pages_set,
	.get = param_get_uint,
};

module_param_cb(prefetch_pages, &sdsm_prefetch_pages_ops, &prefetch_pages,
		0644);
MODULE_PARM_DESC(prefetch_pages,
		 "pages read ahead of a sequential stream of read faults (0..64, 0 off, default 8)");

/*
 * A read fault on a page no node holds is granted writable (struct
 * sdsm_proto_ctx.exclusive): a page read then written (c[i][j] += ...)
 * costs one round trip, not a read and an upgrade.  Read by the home's
 * transactions as they start, so it may change at any time.
 */
static bool exclusive_reads = true;
module_param(exclusive_reads, bool, 0644);
MODULE_PARM_DESC(exclusive_reads,
		 "grant a read of a page no node holds writable, saving the upgrade of a first write (default Y)");

/*
 * A page passed from node to node, each reading then writing it, is
 * served whole to each reader (struct sdsm_proto_ctx.migratory): one
 * round trip a hand-off instead of a read and an upgrade.  Read by the
 * home's transactions as they start, so it may change at any time.
 */
static bool migratory_sharing = true;
module_param(migratory_sharing, bool, 0644);
MODULE_PARM_DESC(migratory_sharing,
		 "grant a read of a page that migrates from writer to writer writable (default Y)");

static unsigned int default_region_mb = 64;
module_param(default_region_mb, uint, 0444);
MODULE_PARM_DESC(default_region_mb,
		 "size in MiB of the default region, mmap offset 0 (1..65536, default 64)");

#define SDSM_PAGE_LOCK_BITS	10
#define SDSM_PAGE_WQ_BITS	8

static struct mutex sdsm_page_locks[1 << SDSM_PAGE_LOCK_BITS];
static wait_queue_head_t sdsm_page_wqs[1 << SDSM_PAGE_WQ_BITS];

atomic64_t sdsm_homed_pages[SDSM_MAX_NODES];

/* ------------------------------------------------------------------ */
/* The address_space every open file shares                           */

static struct vfsmount *sdsm_fs_mnt;
static int sdsm_fs_cnt;
static struct inode *sdsm_inode;

static int sdsm_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, 0x5344534d) ? 0 : -ENOMEM;
}

/*
 * No .owner: a pinned mount would hold a module reference for as long as
 * the module is loaded and rmmod could never succeed; sdsm_mem_exit()
 * releases the mount before the module's text goes away.
 */
static struct file_system_type sdsm_fs_type = {
	.name = "sdsm",
	.init_fs_context = sdsm_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

int sdsm_mem_open(struct inode *inode, struct file *file)
{
	file->f_mapping = sdsm_inode->i_mapping;
	return 0;
}

static struct address_space *sdsm_mapping(void)
{
	return sdsm_inode->i_mapping;
}

/* ------------------------------------------------------------------ */
/* Page state                                                          */

static u64 sdsm_page_key(const struct sdsm_region *r, u64 idx)
{
	return ((u64)r->id << 40) ^ idx;
}

struct mutex *sdsm_page_lock(const struct sdsm_region *r, u64 idx)
{
	return &sdsm_page_locks[hash_64(sdsm_page_key(r, idx),
					SDSM_PAGE_LOCK_BITS)];
}

static wait_queue_head_t *sdsm_page_wq(const struct sdsm_region *r, u64 idx)
{
	return &sdsm_page_wqs[hash_64(sdsm_page_key(r, idx),
				      SDSM_PAGE_WQ_BITS)];
}

/* Node numbers, NO_NODE included, fit the u8 fields of the page state. */
static_assert(SDSM_MAX_NODES <= SDSM_PROTO_MAX_NODES);
static_assert(SDSM_MAX_NODES <= SDSM_PROTO_NO_NODE);
static_assert(SDSM_PROTO_NO_NODE <= U8_MAX);
/* The sizes metadata_bytes_per_page counts on: see sdsm_chunk_bytes(). */
static_assert(sizeof(struct sdsm_page) == 24);
static_assert(sizeof(struct sdsm_home_page) == 32);

/*
 * The memory a chunk of @size bytes takes: whole pages, exactly.  Chunks
 * are sized in pages and allocated by alloc_pages_exact(), which frees the
 * tail of its power-of-two block, so none is lost to a size class.
 */
size_t sdsm_chunk_bytes(size_t size)
{
	return PAGE_ALIGN(size);
}

/* The work items of this file: spares, holds, hand-backs. */
static struct workqueue_struct *sdsm_mem_wq;

/* Zeroed and charged; no OOM kill for it, see "Memory" above. */
static void *sdsm_chunk_alloc(size_t size)
{
	return alloc_pages_exact(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				 __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
}

static void sdsm_chunk_init(void *p)
{
	struct sdsm_chunk *chunk = p;
	unsigned int i;

	for (i = 0; i < SDSM_CHUNK_PAGES; i++) {
		chunk->pages[i].home = SDSM_PROTO_NO_NODE;
		chunk->pages[i].mgr_home = SDSM_PROTO_NO_NODE;
	}
}

static void sdsm_home_chunk_init(void *p)
{
	struct sdsm_home_chunk *chunk = p;
	unsigned int i;

	for (i = 0; i < SDSM_CHUNK_PAGES; i++)
		sdsm_proto_home_init(&chunk->pages[i].dir);
}

static void sdsm_rc_chunk_init(void *p)
{
}

static const struct {
	size_t size;
	void (*init)(void *chunk);
} sdsm_chunk_types[SDSM_CHUNK_KINDS] = {
	[SDSM_CHUNK_NODE] = { sizeof(struct sdsm_chunk), sdsm_chunk_init },
	[SDSM_CHUNK_HOME] = { sizeof(struct sdsm_home_chunk),
			      sdsm_home_chunk_init },
	[SDSM_CHUNK_RC] = { sizeof(struct sdsm_rc_chunk), sdsm_rc_chunk_init },
};

/* A new chunk of @kind, zeroed, charged and initialized; or NULL. */
static void *sdsm_chunk_new(enum sdsm_chunk_kind kind)
{
	void *chunk = sdsm_chunk_alloc(sdsm_chunk_types[kind].size);

	if (chunk)
		sdsm_chunk_types[kind].init(chunk);
	return chunk;
}

/*
 * Spare chunks.  So that the first fault in SDSM_CHUNK_PAGES pages
 * allocates nothing either (issue 11), a region keeps one chunk of each
 * kind allocated ahead (struct sdsm_region.chunk_spare): a fault or a
 * handler that needs a chunk takes it, and the region's work item
 * allocates the next one, under set_active_memcg() of the region's
 * cgroup, while the region has chunks of that kind still to allocate.
 * The first spare of node-side state is allocated as this node first maps
 * the region, in the mapping process; those of the other kinds after the
 * first chunk of their kind, wherever it was allocated (the kinds a node
 * never uses, home state where nothing is homed for example, keep
 * none).  So a region holds at most one unused chunk of each kind.
 * Counted: what the spares allocate (stats/spare_chunks), not as a cost
 * of any fault; an allocation on a fault's or a handler's path (no spare:
 * a burst took it before the work item ran) in cost_allocs.
 */
static void sdsm_chunk_spare_kick(struct sdsm_region *r)
{
	kref_get(&r->ref);
	if (!queue_work(sdsm_mem_wq, &r->spare_work))
		sdsm_region_put(r);	/* queued already: not the last one */
}

/* Does @r want a spare chunk of @kind that it has not got? */
static bool sdsm_chunk_spare_wanted(struct sdsm_region *r,
				    enum sdsm_chunk_kind kind)
{
	return !READ_ONCE(r->chunk_spare[kind]) &&
	       atomic_long_read(&r->chunks_used[kind]) < r->nchunks;
}

/* A new spare of @kind into @r, if it has none: false if none could be. */
static bool sdsm_chunk_spare_fill(struct sdsm_region *r,
				  enum sdsm_chunk_kind kind)
{
	void *chunk = sdsm_chunk_new(kind);

	if (!chunk)
		return false;
	if (cmpxchg(&r->chunk_spare[kind], NULL, chunk))
		free_pages_exact(chunk, sdsm_chunk_types[kind].size);
	else
		sdsm_stat_inc(SDSM_STAT_SPARE_CHUNKS);
	return true;
}

static void sdsm_chunk_spare_work(struct work_struct *work)
{
	struct sdsm_region *r = container_of(work, struct sdsm_region,
					     spare_work);
	struct mem_cgroup *old_memcg = set_active_memcg(READ_ONCE(r->memcg));
	enum sdsm_chunk_kind kind;

	for (kind = 0; kind < SDSM_CHUNK_KINDS; kind++)
		if (atomic_long_read(&r->chunks_used[kind]) &&
		    sdsm_chunk_spare_wanted(r, kind))
			sdsm_chunk_spare_fill(r, kind);
	set_active_memcg(old_memcg);
	sdsm_region_put(r);
}

void sdsm_mem_region_init(struct sdsm_region *r)
{
	enum sdsm_chunk_kind kind;

	for (kind = 0; kind < SDSM_CHUNK_KINDS; kind++)
		atomic_long_set(&r->chunks_used[kind], 0);
	INIT_WORK(&r->spare_work, sdsm_chunk_spare_work);
}

/*
 * The chunk of @kind in *@slot: if there is none and @alloc, the region's
 * spare or a new one, published with cmpxchg (a racing caller's wins, and
 * ours becomes the spare again); then the work item allocates the next
 * spare.  Chunks live as long as their region.  NULL: none, or no memory.
 */
static void *sdsm_chunk_get(struct sdsm_region *r, enum sdsm_chunk_kind kind,
			    void **slot, bool alloc)
{
	void *chunk = READ_ONCE(*slot), *old;

	if (chunk || !alloc)
		return chunk;
	chunk = xchg(&r->chunk_spare[kind], NULL);
	if (!chunk) {
		chunk = sdsm_chunk_new(kind);
		if (!chunk)
			return NULL;
		sdsm_cost(SDSM_STAT_COST_ALLOCS);
	}
	old = cmpxchg(slot, NULL, chunk);
	if (old) {
		if (cmpxchg(&r->chunk_spare[kind], NULL, chunk))
			free_pages_exact(chunk, sdsm_chunk_types[kind].size);
		return old;
	}
	atomic_long_inc(&r->chunks_used[kind]);
	if (sdsm_chunk_spare_wanted(r, kind))
		sdsm_chunk_spare_kick(r);
	return chunk;
}

/* The node-side state of page @idx, allocated on first use if @alloc. */
struct sdsm_page *sdsm_page_get(struct sdsm_region *r, u64 idx, bool alloc)
{
	struct sdsm_chunk *chunk;

	if (WARN_ON_ONCE(idx >= r->npages))
		return NULL;
	chunk = sdsm_chunk_get(r, SDSM_CHUNK_NODE,
			       (void **)&r->chunks[idx >> SDSM_CHUNK_SHIFT],
			       alloc);
	return chunk ? &chunk->pages[idx & (SDSM_CHUNK_PAGES - 1)] : NULL;
}

/*
 * The home side of page @idx, allocated on first use if @alloc (a node
 * serving a request as the page's home).
 */
static struct sdsm_home_page *sdsm_home_page_get(struct sdsm_region *r,
						 u64 idx, bool alloc)
{
	struct sdsm_home_chunk *chunk;

	if (WARN_ON_ONCE(idx >= r->npages))
		return NULL;
	chunk = sdsm_chunk_get(r, SDSM_CHUNK_HOME,
			       (void **)&r->home_chunks[idx >> SDSM_CHUNK_SHIFT],
			       alloc);
	return chunk ? &chunk->pages[idx & (SDSM_CHUNK_PAGES - 1)] : NULL;
}

/* This node's copy of @pg, NULL if none (the spare is not one). */
static struct page *sdsm_page_copy(const struct sdsm_page *pg)
{
	return pg->flags & SDSM_PAGE_SPARE ? NULL : pg->copy;
}

/* Fail @pg's faults with @err, a negative errno (sdsm_page_err()). */
static void sdsm_page_set_err(struct sdsm_page *pg, int err)
{
	pg->err = err < 0 && err >= -U8_MAX ? -err : EIO;
}

/* Microseconds, truncated: struct sdsm_page.req_us (wraps in 71 min). */
static u32 sdsm_now_us(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

/* Locks: the page's mutex. */
void sdsm_page_set_home(struct sdsm_region *r, struct sdsm_page *pg, u16 home)
{
	if (pg->home != SDSM_PROTO_NO_NODE || home >= SDSM_MAX_NODES)
		return;
	pg->home = home;
	pg->flags &= ~SDSM_PAGE_HOME_STALE;
	if (!(pg->flags & SDSM_PAGE_HOMED) || home != sdsm_cl.node_id)
		atomic64_inc(&sdsm_homed_pages[home]);
	if (home == sdsm_cl.node_id && !(pg->flags & SDSM_PAGE_HOMED)) {
		pg->flags |= SDSM_PAGE_HOMED;
		atomic64_inc(&r->pages_homed);
	}
}

/*
 * The home @pg->home refused a request (NACK ESTALE): it is not the home,
 * our view predates a placement change.  Forget it; the next fault asks
 * the page's manager.  Locks: the page's mutex.
 */
static void sdsm_page_forget_home(struct sdsm_region *r, struct sdsm_page *pg)
{
	u16 old = pg->home;

	if (old == SDSM_PROTO_NO_NODE)
		return;
	pg->home = SDSM_PROTO_NO_NODE;
	pg->flags |= SDSM_PAGE_HOME_STALE;
	atomic64_dec(&sdsm_homed_pages[old]);
	/* Counted by sdsm_page_set_home(), never served (it refused). */
	if (old == sdsm_cl.node_id && (pg->flags & SDSM_PAGE_HOMED) &&
	    !(pg->flags & SDSM_PAGE_TOUCHED)) {
		pg->flags &= ~SDSM_PAGE_HOMED;
		atomic64_dec(&r->pages_homed);
	}
}

/* A directory here served its first request: count it once. */
static void sdsm_page_homed_here(struct sdsm_region *r, struct sdsm_page *pg)
{
	if (pg->flags & SDSM_PAGE_HOMED)
		return;
	pg->flags |= SDSM_PAGE_HOMED;
	atomic64_inc(&r->pages_homed);
	if (pg->home != sdsm_cl.node_id)
		atomic64_inc(&sdsm_homed_pages[sdsm_cl.node_id]);
}

/*
 * Count @pg in @r's pages_cached while this node holds a copy (@cached),
 * once (SDSM_PAGE_CACHED).  Locks: the page's mutex.
 */
static void sdsm_page_count_cached(struct sdsm_region *r,
				   struct sdsm_page *pg, bool cached)
{
	if (cached && !(pg->flags & SDSM_PAGE_CACHED)) {
		pg->flags |= SDSM_PAGE_CACHED;
		atomic64_inc(&r->pages_cached);
	} else if (!cached && (pg->flags & SDSM_PAGE_CACHED)) {
		pg->flags &= ~SDSM_PAGE_CACHED;
		atomic64_dec(&r->pages_cached);
	}
}

/* Keep pages_cached and the node copy in step with the node state. */
static void sdsm_page_settle(struct sdsm_region *r, struct sdsm_page *pg)
{
	bool cached = pg->node.state != SDSM_PROTO_NODE_I;

	sdsm_page_count_cached(r, pg, cached);
	/* Invalid: no PTE maps the copy any more (map() zapped them). */
	if (!cached && sdsm_page_copy(pg)) {
		__free_page(pg->copy);
		pg->copy = NULL;
	}
}

/*
 * A page copy the protocol already committed to: charged to the memcg of
 * the caller (the faulting task, or the region's set by the handler), and
 * never failing (a grant or the owner's data cannot be refused).  Past the
 * memcg's limit the charge is forced (memory.events "max") without its
 * OOM killer (__GFP_RETRY_MAYFAIL), which would free none of the region's
 * copies; __GFP_NOFAIL alone invoked it first.
 */
static struct page *sdsm_copy_alloc_nofail(gfp_t gfp)
{
	sdsm_cost(SDSM_STAT_COST_ALLOCS);
	return alloc_page(gfp | __GFP_ACCOUNT | __GFP_NOFAIL |
			  __GFP_RETRY_MAYFAIL);
}

/*
 * The spare pool: pages allocated ahead of the faults that need a spare,
 * so that a fault takes one instead of allocating it on its way to the
 * request (nothing allocated on a fault's path: issue 11).  Like the
 * memory controller's own per-CPU charge stock, it serves one memory
 * cgroup at a time, its pages charged to it as they are allocated: a
 * fault takes one only if its task is in that cgroup; otherwise it
 * allocates its spare itself, as it always did, and the pool turns to
 * the fault's cgroup (its pages freed, refilled for the new one).  A work
 * item refills it to SDSM_SPARE_POOL pages once it is down to
 * SDSM_SPARE_LOW, under set_active_memcg() of its cgroup and with a
 * fault's flags (reclaim, no OOM killer), so a full cgroup leaves the
 * pool empty and its faults fail as they did; after a refill that got no
 * page it waits for a fault's own allocation to succeed before trying
 * again.  At most SDSM_SPARE_POOL pages (128 KiB) stay charged to the
 * cgroup that faulted last, until another faults or the module goes.
 * Counted: the pages it allocates (stats/spare_refills), not as a cost
 * of any fault.
 *
 * Locking: @lock (a spinlock, taken in faults) protects everything but
 * @work; @failed, a hint, is also cleared without it.  @memcg changes,
 * and pages are added, only in the work item, which does not run
 * concurrently with itself; faults take pages and set @want.
 */
#define SDSM_SPARE_POOL	32
#define SDSM_SPARE_LOW	24
/* A spare's flags, whether a fault or the pool's work item allocates it. */
#define SDSM_SPARE_GFP	(GFP_HIGHUSER | __GFP_ACCOUNT | __GFP_RETRY_MAYFAIL | \
			 __GFP_NOWARN)

static struct sdsm_spare_pool {
	spinlock_t lock;		/* see above */
	unsigned int nr;
	bool failed;			/* the last refill got no page */
	struct page *pages[SDSM_SPARE_POOL];
	struct mem_cgroup *memcg;	/* a reference; NULL before any */
	struct mem_cgroup *want;	/* a reference: serve it next; or NULL */
	struct work_struct work;
} sdsm_spares;

/* A reference to @memcg, which RCU keeps: false if it is going away. */
static bool sdsm_memcg_tryget(struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	return css_tryget(&memcg->css);
#else
	return false;
#endif
}

/*
 * A spare for a fault of the current task, from the pool: NULL if it has
 * none for the task's memory cgroup.
 */
static struct page *sdsm_spare_take(void)
{
	struct sdsm_spare_pool *sp = &sdsm_spares;
	struct mem_cgroup *memcg, *put = NULL;
	struct page *page = NULL;
	bool kick = false;

	rcu_read_lock();
	memcg = mem_cgroup_disabled() ? NULL : mem_cgroup_from_task(current);
	spin_lock(&sp->lock);
	if (memcg == sp->memcg) {
		if (sp->nr)
			page = sp->pages[--sp->nr];
		kick = sp->nr <= SDSM_SPARE_LOW && !sp->failed;
		put = sp->want;		/* another cgroup asked; this one won */
		sp->want = NULL;
	} else if (memcg && memcg != sp->want && sdsm_memcg_tryget(memcg)) {
		put = sp->want;
		sp->want = memcg;
		kick = true;
	}
	spin_unlock(&sp->lock);
	rcu_read_unlock();
	mem_cgroup_put(put);
	if (kick)
		queue_work(sdsm_mem_wq, &sp->work);
	return page;
}

/*
 * A spare for a fault or a prefetch of the current task: from the pool,
 * else allocated here with @gfp (counted in cost_allocs), after which the
 * pool may try again.  NULL if neither gives one.
 */
static struct page *sdsm_spare_get(gfp_t gfp)
{
	struct page *page = sdsm_spare_take();

	if (page)
		return page;
	page = alloc_page(gfp);
	if (!page)
		return NULL;
	sdsm_cost(SDSM_STAT_COST_ALLOCS);
	if (READ_ONCE(sdsm_spares.failed))
		WRITE_ONCE(sdsm_spares.failed, false);
	return page;
}

/* Empty the pool into @pages; returns how many.  Locks: @sp->lock. */
static unsigned int sdsm_spare_empty(struct sdsm_spare_pool *sp,
				     struct page **pages)
{
	unsigned int n = sp->nr;

	memcpy(pages, sp->pages, n * sizeof(*pages));
	sp->nr = 0;
	return n;
}

static void sdsm_spare_work(struct work_struct *work)
{
	struct sdsm_spare_pool *sp = container_of(work, struct sdsm_spare_pool,
						  work);
	struct page *old[SDSM_SPARE_POOL];
	struct mem_cgroup *memcg, *prev, *put = NULL;
	unsigned int n = 0;
	struct page *page;
	bool more, added;

	spin_lock(&sp->lock);
	if (sp->want) {
		put = sp->memcg;
		sp->memcg = sp->want;
		sp->want = NULL;
		WRITE_ONCE(sp->failed, false);
		n = sdsm_spare_empty(sp, old);
	}
	memcg = sp->memcg;
	spin_unlock(&sp->lock);
	while (n)
		__free_page(old[--n]);
	mem_cgroup_put(put);

	prev = set_active_memcg(memcg);
	do {
		page = alloc_page(SDSM_SPARE_GFP);
		spin_lock(&sp->lock);
		WRITE_ONCE(sp->failed, !page);
		/* Not if a fault turned the pool to another cgroup meanwhile. */
		added = page && sp->memcg == memcg && !sp->want &&
			sp->nr < SDSM_SPARE_POOL;
		if (added) {
			sp->pages[sp->nr++] = page;
			page = NULL;
		}
		more = added && sp->nr < SDSM_SPARE_POOL;
		spin_unlock(&sp->lock);
		if (page)
			__free_page(page);
		if (added)
			sdsm_stat_inc(SDSM_STAT_SPARE_REFILLS);
	} while (more);
	set_active_memcg(prev);
}

/* After the work queue is gone: free the pool and its references. */
static void sdsm_spare_exit(void)
{
	struct sdsm_spare_pool *sp = &sdsm_spares;
	struct page *old[SDSM_SPARE_POOL];
	unsigned int n = sdsm_spare_empty(sp, old);

	while (n)
		__free_page(old[--n]);
	mem_cgroup_put(sp->want);
	mem_cgroup_put(sp->memcg);
	sp->want = NULL;
	sp->memcg = NULL;
}

/*
 * Tests only: the next N coherence messages received from a peer are
 * handled as if they had arrived truncated.  Documentation/transport.rst,
 * "Fault injection".
 */
static unsigned int sdsm_inject_short_msgs;
module_param_named(inject_short_msgs, sdsm_inject_short_msgs, uint, 0644);
MODULE_PARM_DESC(inject_short_msgs,
		 "tests only: take the next N coherence messages received as truncated (default 0)");

/*
 * A message of @src that the protocol cannot take.  Dropped, it would
 * leave its page waiting for an answer that never comes: the session with
 * @src is reset instead, both sides report each other DOWN, and what
 * waited on the peer fails at once (issue 13, receive-side drops).
 */
static void sdsm_mem_peer_broken(u16 src, const char *why)
{
	pr_err_ratelimited("node %u: %s: session reset\n", src, why);
	if (src != sdsm_cl.node_id)
		sdsm_peer_reset(&sdsm_cl.peers[src], why);
}

static void sdsm_mem_dispatch(const struct sdsm_msg *msg);
static void sdsm_handback_recv(u16 src, u64 cookie);

/* ------------------------------------------------------------------ */
/* The protocol's actions                                              */

/* One protocol call: the page, and the message being received (install). */
struct sdsm_pctx {
	struct sdsm_region *r;
	u64 idx;
	struct sdsm_page *pg;
	struct sdsm_home_page *hp;
	const struct sdsm_msg *in_msg;	/* the message handled, if any */
	struct page *in_page;
	u8 in_data;
};

static void sdsm_op_send(void *priv, const struct sdsm_proto_msg *msg)
{
	struct sdsm_pctx *c = priv;
	struct sdsm_wire_coh w = {
		.region = cpu_to_be32(msg->region),
		.seq = cpu_to_be32(msg->seq),
		.page = cpu_to_be64(msg->page),
		.type = msg->type,
		.flags = msg->flags,
		.err = cpu_to_be16(msg->err),
	};
	struct page *src, *snap = NULL;

	if (msg->flags & SDSM_PROTO_F_DATA) {
		src = msg->type == SDSM_PROTO_MSG_DATA ?
			sdsm_page_copy(c->pg) : c->hp->home_copy;
		if (src && msg->type != SDSM_PROTO_MSG_DATA) {
			/* The home copy, by reference: see sdsm_home_copy_own(). */
			get_page(src);
			snap = src;
			w.data = SDSM_WIRE_DATA_PAGE;
		} else if (src) {
			/* A node copy is mapped: a snapshot of it. */
			snap = sdsm_copy_alloc_nofail(GFP_KERNEL);
			copy_highpage(snap, src);
			sdsm_cost(SDSM_STAT_COST_COPIES);
			w.data = SDSM_WIRE_DATA_PAGE;
		} else {
			w.data = SDSM_WIRE_DATA_ZERO;
		}
	}
	if (msg->type == SDSM_PROTO_MSG_INV ||
	    msg->type == SDSM_PROTO_MSG_FETCH ||
	    msg->type == SDSM_PROTO_MSG_FETCH_INV)
		sdsm_stat_inc(SDSM_STAT_INVALIDATIONS_SENT);
	trace_sdsm_coh_send(msg->dst, msg->region, msg->page, msg->type,
			    msg->seq, w.data);
	sdsm_queue(msg->dst, SDSM_MSG_COH, &w, sizeof(w), snap);
}

/*
 * The home copy is about to be overwritten.  Grants carry it by reference
 * (sdsm_op_send()), not as a snapshot, and this node's read copy may be
 * the same page (sdsm_op_own_fetch()); if a message or the node copy still
 * holds it (queued, or posted and not yet completed), it is left to them
 * and the home copy starts afresh (NULL: all zero, or a new page the
 * caller allocates).  Nothing but those two takes a reference, under the
 * page's mutex, so a count of 1 stays 1.  Locks: the page's mutex.
 */
static void sdsm_home_copy_own(struct sdsm_home_page *hp)
{
	if (hp->home_copy && page_count(hp->home_copy) > 1) {
		put_page(hp->home_copy);
		hp->home_copy = NULL;
	}
}

/*
 * The page of message @in (the handler's in_page) becomes the copy *@dst
 * itself, without a CPU copy: the page in *@dst, which nothing maps or
 * sends (a fault's spare, or one allocated for the copy), takes its place
 * in the receive ring (sdsm_msg_take_page()).  Its memory cgroup charge
 * stays with it, so at most the ring's pages are charged to another
 * cgroup than the copies they stand for (Documentation/coherent-memory.rst,
 * "Memory accounting").  False if the page cannot be taken (no message,
 * or this node's own): the caller copies.
 */
static bool sdsm_install_received(const struct sdsm_msg *in,
				  struct page **dst)
{
	struct page *got;

	if (!in)
		return false;
	got = sdsm_msg_take_page(in, *dst);
	if (!got)
		return false;
	*dst = got;
	return true;
}

static void sdsm_op_install(void *priv, const struct sdsm_proto_msg *msg)
{
	struct sdsm_pctx *c = priv;
	bool home = msg->type == SDSM_PROTO_MSG_DATA;
	struct page **dst = home ? &c->hp->home_copy : &c->pg->copy;
	bool page = c->in_data == SDSM_WIRE_DATA_PAGE && c->in_page;
	bool fresh = true;	/* *dst is no copy yet: nothing maps it */

	if (home)
		sdsm_home_copy_own(c->hp);

	/* A node copy: the one the fault charged to its task, if any. */
	if (!home && (c->pg->flags & SDSM_PAGE_SPARE)) {
		c->pg->flags &= ~SDSM_PAGE_SPARE;
		if (!page)
			clear_highpage(*dst);
	} else if (!*dst && (page || !home)) {
		/* The home copy may stay NULL (zero); a node copy is mapped. */
		*dst = sdsm_copy_alloc_nofail(page ? GFP_HIGHUSER :
					      GFP_HIGHUSER | __GFP_ZERO);
	} else if (home && page) {
		/*
		 * A home copy nothing else holds any more (own, above): no
		 * PTE maps it, no message carries it; the ring takes it.
		 */
	} else {
		fresh = false;
		if (*dst && !page)
			clear_highpage(*dst);
	}
	if (page && !(fresh &&
		      sdsm_install_received(c->in_msg, dst))) {
		copy_highpage(*dst, c->in_page);
		sdsm_cost(SDSM_STAT_COST_COPIES);
	}
	if (!home)
		sdsm_stat_inc(SDSM_STAT_PAGES_FETCHED);
}

static void sdsm_op_map(void *priv, enum sdsm_proto_map how)
{
	struct sdsm_pctx *c = priv;

	/*
	 * Read-only is done by zapping too: the next read fault maps the
	 * page read-only again.  Returns with every TLB of this node clean.
	 */
	if (how == SDSM_PROTO_MAP_RW)
		return;
	/* Taken back before any fault used it: no hit to count. */
	if (how == SDSM_PROTO_MAP_NONE)
		c->pg->flags &= ~SDSM_PAGE_PREFETCHED;
	unmap_mapping_range(sdsm_mapping(),
			    sdsm_region_offset(c->r) + (c->idx << PAGE_SHIFT),
			    PAGE_SIZE, 1);
}

static void sdsm_op_wake(void *priv, int err)
{
	struct sdsm_pctx *c = priv;

	if (err == -ESTALE) {
		/* Not the home: ask again, the woken fault retries. */
		sdsm_page_forget_home(c->r, c->pg);
	} else if (err) {
		/* ENOMEM, a home short of memory now, fails one fault only. */
		sdsm_page_set_err(c->pg, err);
	} else if ((c->pg->flags & SDSM_PAGE_TIMED) &&
		   c->pg->home != sdsm_cl.node_id) {
		/* The histogram is of remote homes' answers. */
		sdsm_stat_fault_latency((u64)(u32)(sdsm_now_us() -
						   c->pg->req_us) *
					NSEC_PER_USEC);
	}
	c->pg->flags &= ~SDSM_PAGE_TIMED;
	wake_up_all(sdsm_page_wq(c->r, c->idx));
}

static void sdsm_op_error(void *priv, const struct sdsm_proto_msg *msg,
			  const char *why)
{
	pr_warn_ratelimited("protocol error: %s from node %u, region %llu page %llu: %s\n",
			    sdsm_proto_msg_name(msg->type), msg->src,
			    msg->region, msg->page, why);
}

static const struct sdsm_proto_ops sdsm_mem_proto_ops;

/*
 * The context of this node's node side of @c's page, for an action of the
 * directory here that acts on it (own_fetch, own_inv).
 */
static struct sdsm_proto_ctx sdsm_pctx_node_ctx(struct sdsm_pctx *c)
{
	return (struct sdsm_proto_ctx){
		.ops = &sdsm_mem_proto_ops,
		.priv = c,
		.region = c->r->id,
		.page = c->idx,
		.self = sdsm_cl.node_id,
		.home = c->pg->home,
	};
}

/*
 * The page's directory here found this node's node side the owner: give
 * the copy up as a FETCH (@inv false) or FETCH_INV would, synchronously,
 * with no message to self, and make it the home copy.  sdsm_op_map()
 * zaps this node's PTEs (TLBs flushed) before the copy is taken, so no
 * store can follow the snapshot.  For FETCH_INV the node copy itself
 * becomes the home copy (no PTE maps it any more, VM_PFNMAP: no other
 * reference); for FETCH it becomes the home copy too, shared with the
 * node, which keeps it as its read copy (see "Messages" above): no copy,
 * no allocation.  Locks: the page's mutex (the caller's protocol call).
 */
static bool sdsm_op_own_fetch(void *priv, bool inv)
{
	struct sdsm_pctx *c = priv;
	struct sdsm_home_page *hp = c->hp;
	struct sdsm_page *pg = c->pg;
	struct sdsm_proto_ctx ctx = sdsm_pctx_node_ctx(c);

	if (!sdsm_proto_node_yield(&ctx, &pg->node, inv))
		return false;
	sdsm_stat_inc(SDSM_STAT_INVALIDATIONS_SENT);
	if (inv) {
		sdsm_stat_inc(SDSM_STAT_INVALIDATIONS_RECEIVED);
		/* The old home copy goes where settle frees an I copy. */
		swap(hp->home_copy, pg->copy);
	} else if (pg->copy) {
		/* Shared, read-only here from now on; already, if unwritten. */
		if (hp->home_copy != pg->copy) {
			if (hp->home_copy)
				put_page(hp->home_copy);
			get_page(pg->copy);
			hp->home_copy = pg->copy;
		}
	} else if (hp->home_copy) {
		/* An M copy is always allocated; zero, as install would. */
		sdsm_home_copy_own(hp);
		if (hp->home_copy)
			clear_highpage(hp->home_copy);
	}
	sdsm_page_settle(c->r, pg);
	return true;
}

/*
 * The page's directory here invalidates this node's read copy for another
 * node's write: drop it as an INV would (sdsm_op_map() zaps the PTEs,
 * TLBs flushed, before the directory counts it acknowledged), with no INV
 * or INV_ACK through the loop-back; settle frees the copy (one reference,
 * if it is the home copy too).  Locks: the page's mutex (the caller's
 * protocol call).
 */
static bool sdsm_op_own_inv(void *priv)
{
	struct sdsm_pctx *c = priv;
	struct sdsm_page *pg = c->pg;
	struct sdsm_proto_ctx ctx = sdsm_pctx_node_ctx(c);

	if (!sdsm_proto_node_drop(&ctx, &pg->node))
		return false;
	sdsm_stat_inc(SDSM_STAT_INVALIDATIONS_SENT);
	sdsm_stat_inc(SDSM_STAT_INVALIDATIONS_RECEIVED);
	sdsm_page_settle(c->r, pg);
	return true;
}

/*
 * The page's directory here grants this node's own fault in the fault's
 * call (sdsm_proto_fault_home()): the node copy takes the home copy's
 * data.  As after sdsm_op_own_fetch(), it is the home copy itself, one
 * more reference, no copy: read-only until an upgrade, which the home
 * grants only once every other copy, and every grant that carried this
 * page, is gone or delivered; writable at once only if nothing else holds
 * the page (no message carries it), since in state MODIFIED the home copy
 * is stale anyway.  Otherwise, and for a home copy never written (NULL,
 * all zero, which stays so), the fault's spare is filled.  Locks: the
 * page's mutex (the fault's protocol call).
 */
static void sdsm_op_own_grant(void *priv, bool write)
{
	struct sdsm_pctx *c = priv;
	struct page *home = c->hp->home_copy;
	struct sdsm_page *pg = c->pg;

	if (home && (!write || page_count(home) == 1)) {
		if (pg->copy != home) {
			if (pg->copy)
				put_page(pg->copy);
			get_page(home);
			pg->copy = home;
		}
		pg->flags &= ~SDSM_PAGE_SPARE;
		return;
	}
	/*
	 * State I: a page of the node's own, the fault's spare.  Anything
	 * else there (settle frees it) could be a page a message still holds.
	 */
	if (pg->copy && !(pg->flags & SDSM_PAGE_SPARE)) {
		put_page(pg->copy);
		pg->copy = NULL;
	}
	if (!pg->copy)
		pg->copy = sdsm_copy_alloc_nofail(GFP_HIGHUSER);
	pg->flags &= ~SDSM_PAGE_SPARE;
	if (home) {
		copy_highpage(pg->copy, home);
		sdsm_cost(SDSM_STAT_COST_COPIES);
	} else {
		clear_highpage(pg->copy);
	}
}

static const struct sdsm_proto_ops sdsm_mem_proto_ops = {
	.send = sdsm_op_send,
	.install = sdsm_op_install,
	.map = sdsm_op_map,
	.wake = sdsm_op_wake,
	.error = sdsm_op_error,
	.own_fetch = sdsm_op_own_fetch,
	.own_inv = sdsm_op_own_inv,
	.own_grant = sdsm_op_own_grant,
};

static void sdsm_pctx_init(struct sdsm_proto_ctx *ctx, struct sdsm_pctx *c,
			   struct sdsm_region *r, u64 idx, struct sdsm_page *pg,
			   u16 home)
{
	*c = (struct sdsm_pctx){ .r = r, .idx = idx, .pg = pg };
	*ctx = (struct sdsm_proto_ctx){
		.ops = &sdsm_mem_proto_ops,
		.priv = c,
		.region = r->id,
		.page = idx,
		.self = sdsm_cl.node_id,
		.home = home,
		.exclusive = READ_ONCE(exclusive_reads),
		.migratory = READ_ONCE(migratory_sharing),
	};
}

/* ------------------------------------------------------------------ */
/* Holds: the progress rule                                            */

/*
 * The bound for a grant nobody uses, from the deferral of the message: a
 * woken fault on these TCG guests retries within about 1 ms, a killed or
 * timed-out waiter never does.
 */
#define SDSM_HOLD_MS		10
/*
 * After the fault that used the grant installed its PTE: two ticks, so at
 * least one full tick (4 ms at HZ=250) in which the faulting thread
 * returns to user space and makes its access before the PTE goes.
 */
#define SDSM_HOLD_USED_JIFFIES	2
/*
 * After the thread whose fault used the grant returned to user space
 * (sdsm_hold_resumed(), a task_work): its access is the instruction it
 * runs next, so a margin for an interrupt in between is enough.
 */
#define SDSM_HOLD_RESUMED_NS	(200 * NSEC_PER_USEC)

/**
 * struct sdsm_hold - a page whose node side deferred an INV or FETCH
 * @node: on sdsm_holds
 * @r: the page's region (a reference)
 * @idx: the page
 * @due: jiffies when sdsm_hold_work answers the deferred message
 * @user: the task whose fault used the grant, until it is back in user
 *	space; compared, never dereferenced
 * @resumed_ns: when that task went back to user space, 0 if not yet
 * @seq: its transaction id: an entry left over from an earlier deferral
 *	(answered by a write fault) must not answer a newer one early
 */
struct sdsm_hold {
	struct list_head node;
	struct sdsm_region *r;
	u64 idx;
	unsigned long due;
	const struct task_struct *user;
	u64 resumed_ns;
	u32 seq;
};

/**
 * struct sdsm_hold_resume - a faulting task's way back to user space
 * @cb: its task_work (TWA_RESUME): sdsm_hold_resumed()
 * @file: the faulting mapping's file, held until the callback ends, so
 *	that the module (the file's owner) outlives the callback
 */
struct sdsm_hold_resume {
	struct callback_head cb;
	struct file *file;
};

static DEFINE_SPINLOCK(sdsm_holds_lock);	/* the three below */
static LIST_HEAD(sdsm_holds);
static unsigned long sdsm_hold_next;	/* when sdsm_hold_work runs ... */
static bool sdsm_hold_armed;		/* ... if armed */
static struct delayed_work sdsm_hold_work;
/* Runs sdsm_hold_work SDSM_HOLD_RESUMED_NS after a task's resume. */
static struct hrtimer sdsm_hold_timer;

/* Locks: sdsm_holds_lock. */
static struct sdsm_hold *sdsm_hold_find(struct sdsm_region *r, u64 idx)
{
	struct sdsm_hold *h;

	list_for_each_entry(h, &sdsm_holds, node)
		if (h->r == r && h->idx == idx)
			return h;
	return NULL;
}

/* Make sdsm_hold_work run by @due.  Locks: sdsm_holds_lock. */
static void sdsm_hold_arm(unsigned long due)
{
	if (sdsm_hold_armed && !time_before(due, sdsm_hold_next))
		return;
	sdsm_hold_armed = true;
	sdsm_hold_next = due;
	mod_delayed_work(sdsm_mem_wq, &sdsm_hold_work,
			 time_after(due, jiffies) ? due - jiffies : 0);
}

/*
 * The protocol deferred a message for page @idx of @r: answer it on the
 * bound unless a fault uses the grant first.  Without memory for the
 * entry, answer it now (the behaviour without holds).  Locks: the page's
 * mutex.
 */
static void sdsm_hold_deferred(struct sdsm_proto_ctx *ctx,
			       struct sdsm_region *r, u64 idx,
			       struct sdsm_page *pg)
{
	unsigned long due = jiffies + msecs_to_jiffies(SDSM_HOLD_MS);
	struct sdsm_hold *h, *new;

	new = kmalloc(sizeof(*new), GFP_KERNEL);
	sdsm_cost(SDSM_STAT_COST_ALLOCS);
	spin_lock(&sdsm_holds_lock);
	h = sdsm_hold_find(r, idx);
	if (!h && new) {
		h = new;
		new = NULL;
		kref_get(&r->ref);
		h->r = r;
		h->idx = idx;
		list_add_tail(&h->node, &sdsm_holds);
	}
	if (h) {
		/* A new entry, or one a newer grant's message reuses. */
		h->due = due;
		h->seq = pg->node.deferred_seq;
		h->user = NULL;
		h->resumed_ns = 0;
		sdsm_hold_arm(due);
	}
	spin_unlock(&sdsm_holds_lock);
	kfree(new);
	if (!h)
		sdsm_proto_node_release(ctx, &pg->node);
}

/*
 * A fault of the current task used the grant of page @idx: answer the
 * deferred message once the task is back in user space (the caller then
 * calls sdsm_hold_watch_resume()), at the latest SDSM_HOLD_USED_JIFFIES
 * from now.  Return: whether the page has a hold to end so.  Locks: the
 * page's mutex.
 */
static bool sdsm_hold_used(struct sdsm_region *r, u64 idx)
{
	unsigned long due = jiffies + SDSM_HOLD_USED_JIFFIES;
	bool user = !(current->flags & PF_KTHREAD);
	struct sdsm_hold *h;

	spin_lock(&sdsm_holds_lock);
	h = sdsm_hold_find(r, idx);
	if (h && time_before(due, h->due)) {
		h->due = due;
		sdsm_hold_arm(due);
	}
	if (h && user) {
		h->user = current;
		h->resumed_ns = 0;
	}
	spin_unlock(&sdsm_holds_lock);
	return h && user;
}

static enum hrtimer_restart sdsm_hold_timer_fn(struct hrtimer *t)
{
	mod_delayed_work(sdsm_mem_wq, &sdsm_hold_work, 0);
	return HRTIMER_NORESTART;
}

/*
 * task_work of a task whose fault used a held grant, run as it returns
 * to user space: its access comes next, the holds it used end
 * SDSM_HOLD_RESUMED_NS from now.
 */
static void sdsm_hold_resumed(struct callback_head *cb)
{
	struct sdsm_hold_resume *res = container_of(cb, struct sdsm_hold_resume,
						    cb);
	u64 now = ktime_get_ns();
	struct sdsm_hold *h;
	bool any = false;

	spin_lock(&sdsm_holds_lock);
	list_for_each_entry(h, &sdsm_holds, node) {
		if (h->user != current)
			continue;
		h->user = NULL;
		h->resumed_ns = now;
		any = true;
	}
	if (any)
		hrtimer_start(&sdsm_hold_timer,
			      ns_to_ktime(SDSM_HOLD_RESUMED_NS),
			      HRTIMER_MODE_REL);
	spin_unlock(&sdsm_holds_lock);
	/* The file's release, if this was the last reference, runs after. */
	fput(res->file);
	kfree(res);
}

/*
 * Have sdsm_hold_resumed() run when the current task returns to user
 * space from the fault on @vmf.  Without memory, or for a task that is
 * exiting, the hold ends on SDSM_HOLD_USED_JIFFIES as before.
 */
static void sdsm_hold_watch_resume(struct vm_fault *vmf)
{
	struct sdsm_hold_resume *res;

	res = kmalloc(sizeof(*res), GFP_KERNEL);
	sdsm_cost(SDSM_STAT_COST_ALLOCS);
	if (!res)
		return;
	res->file = get_file(vmf->vma->vm_file);
	init_task_work(&res->cb, sdsm_hold_resumed);
	if (task_work_add(current, &res->cb, TWA_RESUME)) {
		fput(res->file);
		kfree(res);
	}
}

/* End the hold of @h's page, answering its deferred message if any. */
static void sdsm_hold_release(struct sdsm_hold *h)
{
	struct sdsm_page *pg = sdsm_page_get(h->r, h->idx, false);
	struct mutex *lock = sdsm_page_lock(h->r, h->idx);	/* the page's */
	struct sdsm_proto_ctx ctx;
	struct sdsm_pctx c;

	if (!pg)
		return;
	mutex_lock(lock);
	/* Gone already: answered by a write fault, or the home died. */
	if (pg->node.deferred && pg->node.deferred_seq == h->seq &&
	    pg->home != SDSM_PROTO_NO_NODE) {
		sdsm_pctx_init(&ctx, &c, h->r, h->idx, pg, pg->home);
		sdsm_proto_node_release(&ctx, &pg->node);
		sdsm_page_settle(h->r, pg);
	}
	mutex_unlock(lock);
}

static void sdsm_hold_work_fn(struct work_struct *work)
{
	u64 now = ktime_get_ns(), wait = 0, left;
	struct sdsm_hold *h, *tmp;
	LIST_HEAD(due);

	spin_lock(&sdsm_holds_lock);
	sdsm_hold_armed = false;
	list_for_each_entry_safe(h, tmp, &sdsm_holds, node) {
		/* Time left of the hold after its thread's return, if any. */
		left = 0;
		if (h->resumed_ns && now - h->resumed_ns < SDSM_HOLD_RESUMED_NS)
			left = SDSM_HOLD_RESUMED_NS - (now - h->resumed_ns);
		if (time_after_eq(jiffies, h->due) || (h->resumed_ns && !left)) {
			list_move_tail(&h->node, &due);
			continue;
		}
		sdsm_hold_arm(h->due);
		if (left && (!wait || left < wait))
			wait = left;
	}
	if (wait)
		hrtimer_start(&sdsm_hold_timer, ns_to_ktime(wait),
			      HRTIMER_MODE_REL);
	spin_unlock(&sdsm_holds_lock);
	list_for_each_entry_safe(h, tmp, &due, node) {
		sdsm_hold_release(h);
		sdsm_region_put(h->r);
		kfree(h);
	}
	/* A DATA or INV_ACK for a directory here: deliver it now. */
	sdsm_queue_drain_self();
}

/* Module exit: no fault, no message any more; drop what is left. */
static void sdsm_holds_exit(void)
{
	struct sdsm_hold *h, *tmp;

	/* The timer queues the work, the work may start the timer. */
	hrtimer_cancel(&sdsm_hold_timer);
	cancel_delayed_work_sync(&sdsm_hold_work);
	hrtimer_cancel(&sdsm_hold_timer);
	list_for_each_entry_safe(h, tmp, &sdsm_holds, node) {
		list_del(&h->node);
		sdsm_region_put(h->r);
		kfree(h);
	}
}

/* ------------------------------------------------------------------ */
/* Receiving                                                           */

/*
 * Who is the home of page @idx, for a READ or WRITE from @src that reached
 * this node.  A requester sends to a node other than the page's manager
 * only on the manager's word (a computed home is the manager itself), so
 * such a node is the home.  The manager decides, fixing the home now if
 * nobody did: a requester whose computed home predates a SET_POLICY that
 * moved the page elsewhere is refused, never served by a second directory.
 * Locks: the page's mutex.
 */
static u16 sdsm_coh_home(struct sdsm_region *r, u64 idx, struct sdsm_page *pg,
			 u16 src)
{
	int home;

	if (sdsm_page_manager(r, idx) != sdsm_cl.node_id)
		return sdsm_cl.node_id;
	home = sdsm_manager_decide(r, idx, pg, src, true);
	return home < 0 ? SDSM_PROTO_NO_NODE : home;
}

/*
 * A READ or WRITE for which this node has no memory (its page state): the
 * requester's fault fails once (SIGBUS) instead of waiting for nothing.
 */
static void sdsm_coh_nack_nomem(u16 src, const struct sdsm_proto_msg *msg)
{
	struct sdsm_wire_coh w = {
		.region = cpu_to_be32(msg->region),
		.seq = cpu_to_be32(msg->seq),
		.page = cpu_to_be64(msg->page),
		.type = SDSM_PROTO_MSG_NACK,
		.err = cpu_to_be16(ENOMEM),
	};

	sdsm_queue(src, SDSM_MSG_COH, &w, sizeof(w), NULL);
}

/* No memory for the state of @msg's page: refuse a request, else break. */
static void sdsm_coh_no_state(u16 src, const struct sdsm_proto_msg *msg)
{
	if (msg->type == SDSM_PROTO_MSG_READ ||
	    msg->type == SDSM_PROTO_MSG_WRITE) {
		pr_warn_ratelimited("no memory for page state: %s from node %u refused\n",
				    sdsm_proto_msg_name(msg->type), src);
		sdsm_coh_nack_nomem(src, msg);
	} else {
		/* Its state exists wherever the protocol sends it. */
		pr_err_ratelimited("no page state for %s from node %u\n",
				   sdsm_proto_msg_name(msg->type), src);
		sdsm_mem_peer_broken(src, "coherence message for no page state");
	}
}

/*
 * Whether the payload of the DATA being received equals the home copy:
 * its owner gave the page back as it got it (SDSM_PROTO_F_CLEAN).  A
 * grant carries the home copy, which stays as it is until the owner's
 * DATA replaces it.  Locks: the page's mutex.
 */
static bool sdsm_data_clean(const struct sdsm_pctx *c)
{
	struct page *a = NULL, *b = c->hp->home_copy;	/* NULL: zeroes */
	const void *va, *vb;
	bool same;

	if (c->in_data == SDSM_WIRE_DATA_PAGE && c->in_page)
		a = c->in_page;
	else if (c->in_data != SDSM_WIRE_DATA_ZERO)
		return false;
	if (!a)
		swap(a, b);
	if (!a)
		return true;
	va = kmap_local_page(a);
	if (b) {
		vb = kmap_local_page(b);
		same = !memcmp(va, vb, PAGE_SIZE);
		kunmap_local(vb);
	} else {
		same = !memchr_inv(va, 0, PAGE_SIZE);
	}
	kunmap_local(va);
	return same;
}

/*
 * A message for the directory of page @c->idx, homed here.  A transaction
 * this node requested ends by granting its node side directly
 * (ctx->self_node, sdsm_op_own_grant()) instead of a grant to itself: the
 * node side is settled here as the grant's handler would.  Locks: the
 * page's mutex.
 */
static void sdsm_coh_home_recv(struct sdsm_proto_ctx *ctx,
			       struct sdsm_pctx *c,
			       const struct sdsm_proto_msg *msg)
{
	struct sdsm_page *pg = c->pg;
	u8 pending = pg->node.pending;
	u8 state = pg->node.state;
	struct sdsm_proto_msg data;

	/*
	 * Another node's DATA for a READ served as a write: did it write
	 * since its grant?  Nothing else reads SDSM_PROTO_F_CLEAN.
	 */
	if (msg->type == SDSM_PROTO_MSG_DATA && msg->src != ctx->self &&
	    (c->hp->dir.flags & SDSM_PROTO_HOME_READ_AS_WRITE) &&
	    sdsm_data_clean(c)) {
		data = *msg;
		data.flags |= SDSM_PROTO_F_CLEAN;
		msg = &data;
	}
	ctx->self_node = &pg->node;
	sdsm_proto_home_recv(ctx, &c->hp->dir, msg);
	if (pending == SDSM_PROTO_REQ_NONE ||
	    pg->node.pending != SDSM_PROTO_REQ_NONE)
		return;
	if (state == SDSM_PROTO_NODE_S && pg->node.state == SDSM_PROTO_NODE_M)
		sdsm_stat_inc(SDSM_STAT_UPGRADES);
	sdsm_page_settle(c->r, pg);
}

static void sdsm_coh_recv(u16 src, const struct sdsm_wire_coh *w,
			  const struct sdsm_msg *in)
{
	struct page *page = in->page;
	struct sdsm_proto_msg msg = {
		.region = be32_to_cpu(w->region),
		.page = be64_to_cpu(w->page),
		.seq = be32_to_cpu(w->seq),
		.src = src,
		.dst = sdsm_cl.node_id,
		.type = w->type,
		.flags = w->flags & SDSM_PROTO_F_WIRE,
		.err = be16_to_cpu(w->err),
	};
	struct sdsm_proto_home refused;
	struct sdsm_proto_ctx ctx;
	struct mem_cgroup *old_memcg;
	struct sdsm_region *r;
	struct sdsm_page *pg;
	struct sdsm_pctx c;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */
	bool to_home;
	u8 deferred;
	u16 home;

	trace_sdsm_coh_recv(src, msg.region, msg.page, msg.type, msg.seq,
			    w->data);
	r = sdsm_region_get(msg.region);
	if (!r) {
		pr_debug("node %u: %s for unknown region %llu dropped\n", src,
			 sdsm_proto_msg_name(msg.type), msg.region);
		return;
	}
	if (msg.page >= r->npages) {
		pr_err_ratelimited("node %u: %s for page %llu beyond region %u\n",
				   src, sdsm_proto_msg_name(msg.type),
				   msg.page, r->id);
		sdsm_mem_peer_broken(src, "coherence message beyond its region");
		goto out_put;
	}
	/* What this handler allocates is the region's memory here. */
	old_memcg = set_active_memcg(READ_ONCE(r->memcg));
	pg = sdsm_page_get(r, msg.page, true);
	if (!pg) {
		sdsm_coh_no_state(src, &msg);
		goto out_memcg;
	}
	if (page && src != sdsm_cl.node_id)
		sdsm_stat_add(SDSM_STAT_BYTES_RECEIVED, PAGE_SIZE);
	to_home = sdsm_proto_msg_to_home(msg.type);
	lock = sdsm_page_lock(r, msg.page);
	mutex_lock(lock);
	home = to_home ? sdsm_cl.node_id : pg->home;
	if (msg.type == SDSM_PROTO_MSG_READ ||
	    msg.type == SDSM_PROTO_MSG_WRITE)
		home = sdsm_coh_home(r, msg.page, pg, src);
	sdsm_pctx_init(&ctx, &c, r, msg.page, pg, home);
	c.in_msg = in;
	c.in_page = page;
	c.in_data = w->data;
	if (to_home && home != sdsm_cl.node_id) {
		/* Refused (ESTALE), no directory used: allocate none. */
		sdsm_proto_home_init(&refused);
		sdsm_proto_home_recv(&ctx, &refused, &msg);
	} else if (to_home) {
		c.hp = sdsm_home_page_get(r, msg.page, true);
		if (!c.hp) {
			mutex_unlock(lock);
			sdsm_coh_no_state(src, &msg);
			goto out_memcg;
		}
		if (msg.type == SDSM_PROTO_MSG_READ ||
		    msg.type == SDSM_PROTO_MSG_WRITE) {
			pg->flags |= SDSM_PAGE_TOUCHED;
			sdsm_page_homed_here(r, pg);
		}
		sdsm_coh_home_recv(&ctx, &c, &msg);
	} else {
		if (msg.type == SDSM_PROTO_MSG_INV ||
		    msg.type == SDSM_PROTO_MSG_FETCH_INV)
			sdsm_stat_inc(SDSM_STAT_INVALIDATIONS_RECEIVED);
		if (msg.type == SDSM_PROTO_MSG_GRANT_WRITE &&
		    !(msg.flags & SDSM_PROTO_F_DATA) &&
		    pg->node.pending == SDSM_PROTO_REQ_WRITE)
			sdsm_stat_inc(SDSM_STAT_UPGRADES);
		deferred = pg->node.deferred;
		sdsm_proto_node_recv(&ctx, &pg->node, &msg);
		if (pg->node.deferred && !deferred)
			sdsm_hold_deferred(&ctx, r, msg.page, pg);
		sdsm_page_settle(r, pg);
	}
	mutex_unlock(lock);
out_memcg:
	set_active_memcg(old_memcg);
out_put:
	sdsm_region_put(r);
}

/*
 * Cache the homes a HOME_REP from @src told of the pages after @idx
 * (struct sdsm_wire_home.next), for pages @src manages and whose home this
 * node neither knows nor asked for.  Locks: none (takes each page's mutex).
 */
static void sdsm_home_next_recv(struct sdsm_region *r, u16 src, u64 idx,
				const u8 *next)
{
	struct sdsm_page *pg;
	struct mutex *lock;	/* the page's, sdsm_page_lock() */
	unsigned int i;
	u64 j;

	for (i = 0; i < SDSM_WIRE_HOME_NEXT; i++) {
		j = idx + 1 + i;
		if (j >= r->npages)
			break;
		if (next[i] >= sdsm_cl.nr_nodes ||
		    sdsm_page_manager(r, j) != src)
			continue;
		pg = sdsm_page_get(r, j, true);
		if (!pg)
			break;
		lock = sdsm_page_lock(r, j);
		mutex_lock(lock);
		if (!(pg->flags & (SDSM_PAGE_HOME_ASKED | SDSM_PAGE_HOME_STALE)))
			sdsm_page_set_home(r, pg, next[i]);
		mutex_unlock(lock);
	}
}

/*
 * HOME_REP to a faulting node (cookie 0): cache the home, wake; and the
 * homes it tells of the next pages.
 */
static void sdsm_home_rep_recv(u16 src, const struct sdsm_wire_home *w)
{
	u64 idx = be64_to_cpu(w->page);
	s32 home = (s32)be32_to_cpu(w->home);
	struct sdsm_region *r;
	struct sdsm_page *pg;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */

	r = sdsm_region_get(be32_to_cpu(w->region));
	if (!r)
		return;
	if (idx >= r->npages)
		goto out_put;
	pg = sdsm_page_get(r, idx, false);
	if (!pg)
		goto out_put;
	lock = sdsm_page_lock(r, idx);
	mutex_lock(lock);
	if ((pg->flags & SDSM_PAGE_HOME_ASKED) &&
	    src == sdsm_page_manager(r, idx)) {
		pg->flags &= ~SDSM_PAGE_HOME_ASKED;
		if (home < 0 || home >= sdsm_cl.nr_nodes)
			sdsm_page_set_err(pg, home < 0 ? home : -EPROTO);
		else
			sdsm_page_set_home(r, pg, home);
		wake_up_all(sdsm_page_wq(r, idx));
	}
	mutex_unlock(lock);
	sdsm_home_next_recv(r, src, idx, w->next);
out_put:
	sdsm_region_put(r);
}

/* ------------------------------------------------------------------ */
/* Release consistency                                                 */

/*
 * Regions of SDSM_CONSISTENCY_RELEASE run the protocol of sdsm_rc.c
 * (Documentation/protocol.rst, "Release consistency") instead of MSI:
 * their page state is struct sdsm_rc_slot next to struct sdsm_page, whose
 * home, copy, spare, error and timing fields serve both.  Every core call
 * holds the page's mutex, then the region's rc_lock (the core updates the
 * region's rc_local for any page).  The home copy is the slot's; a
 * GRANT_READ carries a snapshot of it, so a DIFF applied while it waits
 * in a queue does not change what was granted.  A DIFF carries, in one
 * page, a diff of each half of the page (each at most
 * SDSM_RC_DIFF_MAX(SDSM_RC_HALF) bytes), or two messages when both do not
 * fit: a PART with half 0, applied on arrival, then the DIFF with half 1,
 * which the core counts.  A PART is a diff of bytes the writer owns, so
 * applying it early changes nothing another node may read before the
 * writer's release.
 *
 * On the page's home the node copy is the home copy (sdsm_rc_alias_home()):
 * writes there need no twin, and its DIFFs carry no bytes, only the
 * version they make.
 * Until another node is served the page (struct sdsm_rc_home.shared)
 * the home's releases skip it altogether (sdsm_rc_flush_skip()): it stays
 * writable, no DIFF, no version; the first READ from another node closes
 * the home's interval silently first (sdsm_rc_home_share()).
 *
 * sdsm_rc_release() (a lock release, a barrier arrival) flushes every
 * written page of every release region of this node and waits for the
 * acknowledgments; sdsm_rc_knowledge() and sdsm_rc_notice() are the
 * write notices the synchronization layer carries (sdsm_sync.c).
 */
#define SDSM_RC_HALF	(PAGE_SIZE / SDSM_WIRE_RC_HALVES)

static_assert(PAGE_SIZE == SDSM_RC_PAGE_MAX);
static_assert(SDSM_RC_DIFF_MAX(SDSM_RC_HALF) <= PAGE_SIZE);

/* Release regions on this node; none: synchronization skips all of it. */
static atomic_t sdsm_rc_regions = ATOMIC_INIT(0);
/* DIFFs sent and not acknowledged, and DIFFs lost, over all regions. */
static atomic_t sdsm_rc_unacked = ATOMIC_INIT(0);
static atomic_t sdsm_rc_lost = ATOMIC_INIT(0);
/* sdsm_rc_release() waits here for sdsm_rc_unacked to reach 0. */
static DECLARE_WAIT_QUEUE_HEAD(sdsm_rc_wq);

bool sdsm_rc_in_use(void)
{
	return atomic_read(&sdsm_rc_regions) > 0;
}

/*
 * Release regions allocated on this node so far.  Each starts its clock
 * (struct sdsm_rc_local) at its number times 2^SDSM_RC_CLOCK_SHIFT, so
 * (unless one region's knowledge rises 2^40 times) the clocks of two
 * regions that had the same id never meet, and a clock a lock kept of
 * the older one (struct sdsm_rc_since) is below every stamp of the
 * newer: it can make a release publish more, never less.
 */
static atomic_t sdsm_rc_incarnations = ATOMIC_INIT(0);

/* A release region was allocated: sdsm_rc_region_free() undoes it. */
void sdsm_rc_region_init(struct sdsm_region *r)
{
	/* Counts up to SDSM_RC_INCARNATIONS and stays there. */
	int n = atomic_fetch_add_unless(&sdsm_rc_incarnations, 1,
					SDSM_RC_INCARNATIONS) + 1;

	atomic_inc(&sdsm_rc_regions);
	/* From the last on: clock 0, and every release publishes all of it. */
	if (n < SDSM_RC_INCARNATIONS)
		r->rc_local.clock = (u64)n << SDSM_RC_CLOCK_SHIFT;
}

static struct sdsm_rc_slot *sdsm_rc_slot_get(struct sdsm_region *r, u64 idx,
					     bool alloc)
{
	unsigned long ch = idx >> SDSM_CHUNK_SHIFT, used, old;
	struct sdsm_rc_chunk *chunk;

	if (WARN_ON_ONCE(idx >= r->npages || !r->rc_chunks))
		return NULL;
	chunk = sdsm_chunk_get(r, SDSM_CHUNK_RC, (void **)&r->rc_chunks[ch],
			       alloc);
	if (!chunk)
		return NULL;
	/* Published: raise rc_used past it (a full barrier on success). */
	for (used = READ_ONCE(r->rc_used); used <= ch; used = old) {
		old = cmpxchg(&r->rc_used, used, ch + 1);
		if (old == used)
			break;
	}
	return &chunk->pages[idx & (SDSM_CHUNK_PAGES - 1)];
}

/* One core call: the page, and the message being received. */
struct sdsm_rctx {
	struct sdsm_region *r;
	u64 idx;
	struct sdsm_page *pg;
	struct sdsm_rc_slot *rs;
	const struct sdsm_wire_rc *in;
	const struct sdsm_msg *in_msg;	/* the message handled, if any */
	struct page *in_page;
	u32 unacked;
	u32 lost;
	bool was_rw;		/* the page in state RW before the call */
};

/* Make the diff of half @h of @rs's page into @buf; its length. */
static int sdsm_rc_half_diff(struct sdsm_rctx *c, const u8 *copy,
			     const u8 *twin, unsigned int h, u8 *buf)
{
	u32 off = h * SDSM_RC_HALF;

	return sdsm_rc_diff_make(twin + off, copy + off, SDSM_RC_HALF, buf,
				 SDSM_RC_DIFF_MAX(SDSM_RC_HALF),
				 SDSM_RC_DIFF_MAX(SDSM_RC_HALF));
}

/*
 * Queue the DIFF of @c's page: the diff of its copy against the twin,
 * both halves in one page if they fit, else a PART and the DIFF.  The
 * copy is write-protected already (sdsm_rc_flush() mapped it RO).
 */
static void sdsm_rc_send_diff(struct sdsm_rctx *c, struct sdsm_wire_rc *w,
			      u16 dst)
{
	struct page *out, *part = NULL;
	int len[SDSM_WIRE_RC_HALVES];
	u8 *copy, *twin, *buf;

	/* Written in the home copy: the DIFF carries no bytes. */
	if (!c->rs->twin) {
		sdsm_stat_inc(SDSM_STAT_DIFFS_SENT);
		sdsm_queue(dst, SDSM_MSG_RC, w, sizeof(*w), NULL);
		return;
	}
	out = sdsm_copy_alloc_nofail(GFP_KERNEL);
	copy = kmap_local_page(c->pg->copy);
	twin = kmap_local_page(c->rs->twin);
	buf = kmap_local_page(out);
	len[0] = sdsm_rc_half_diff(c, copy, twin, 0, buf);
	if (len[0] + SDSM_RC_DIFF_MAX(SDSM_RC_HALF) > PAGE_SIZE) {
		/* Half 0 goes alone, as a PART. */
		part = out;
		kunmap_local(buf);
		out = sdsm_copy_alloc_nofail(GFP_KERNEL);
		buf = kmap_local_page(out);
		len[1] = sdsm_rc_half_diff(c, copy, twin, 1, buf);
	} else {
		len[1] = sdsm_rc_half_diff(c, copy, twin, 1, buf + len[0]);
	}
	kunmap_local(buf);
	kunmap_local(twin);
	kunmap_local(copy);
	/* Not reached: the buffers are the codec's largest. */
	if (WARN_ON_ONCE(len[0] < 0 || len[1] < 0)) {
		len[0] = 0;
		len[1] = 0;
	}
	if (part) {
		struct sdsm_wire_rc pw = *w;

		pw.flags |= SDSM_WIRE_RC_PART;
		pw.diff_len[0] = cpu_to_be16(len[0]);
		sdsm_queue(dst, SDSM_MSG_RC, &pw, sizeof(pw), part);
		w->diff_len[1] = cpu_to_be16(len[1]);
	} else {
		w->diff_len[0] = cpu_to_be16(len[0]);
		w->diff_len[1] = cpu_to_be16(len[1]);
	}
	sdsm_stat_inc(SDSM_STAT_DIFFS_SENT);
	sdsm_stat_add(SDSM_STAT_DIFF_BYTES_SENT, len[0] + len[1]);
	sdsm_queue(dst, SDSM_MSG_RC, w, sizeof(*w), out);
}

static void sdsm_rc_op_send(void *priv, const struct sdsm_rc_msg *msg)
{
	struct sdsm_rctx *c = priv;
	struct sdsm_wire_rc w = {
		.region = cpu_to_be32(msg->region),
		.seq = cpu_to_be32(msg->seq),
		.page = cpu_to_be64(msg->page),
		.version = cpu_to_be32(msg->version),
		.err = cpu_to_be16(msg->err),
		.type = msg->type,
		.flags = msg->flags,
	};
	struct page *snap = NULL;

	if (msg->type == SDSM_RC_MSG_DIFF) {
		sdsm_rc_send_diff(c, &w, msg->dst);
		return;
	}
	if ((msg->flags & SDSM_RC_F_DATA) && msg->dst != sdsm_cl.node_id) {
		if (c->rs->home_copy) {
			snap = sdsm_copy_alloc_nofail(GFP_KERNEL);
			copy_highpage(snap, c->rs->home_copy);
			sdsm_cost(SDSM_STAT_COST_COPIES);
			w.data = SDSM_WIRE_DATA_PAGE;
		} else {
			w.data = SDSM_WIRE_DATA_ZERO;
		}
	}
	sdsm_queue(msg->dst, SDSM_MSG_RC, &w, sizeof(w), snap);
}

/*
 * The page's home is this node: its copy becomes the home copy itself (a
 * reference each), so its writes need no twin and its diffs no bytes
 * (sdsm_rc_send_diff()); the diffs of other nodes land in it as they
 * arrive, bytes this node's data-race-free threads do not read before
 * their next acquire.
 */
static void sdsm_rc_alias_home(struct sdsm_rctx *c)
{
	struct sdsm_page *pg = c->pg;
	struct sdsm_rc_slot *rs = c->rs;

	if (!rs->home_copy)
		rs->home_copy = sdsm_copy_alloc_nofail(GFP_HIGHUSER |
						       __GFP_ZERO);
	if (pg->copy == rs->home_copy)
		return;
	/* The spare or an older copy: no PTE maps it (state I). */
	if (pg->copy)
		__free_page(pg->copy);
	pg->flags &= ~SDSM_PAGE_SPARE;
	get_page(rs->home_copy);
	pg->copy = rs->home_copy;
}

/* This node's copy of @c's page is the home copy (sdsm_rc_alias_home()). */
static bool sdsm_rc_aliased(struct sdsm_rctx *c)
{
	return c->pg->copy && c->pg->copy == c->rs->home_copy;
}

static void sdsm_rc_op_install(void *priv, const struct sdsm_rc_msg *msg)
{
	struct sdsm_rctx *c = priv;
	struct sdsm_page *pg = c->pg;
	bool page = c->in->data == SDSM_WIRE_DATA_PAGE && c->in_page;
	bool fresh = true;	/* pg->copy is no copy yet: nothing maps it */

	sdsm_stat_inc(SDSM_STAT_PAGES_FETCHED);
	if (msg->src == sdsm_cl.node_id) {
		sdsm_rc_alias_home(c);
		return;
	}
	if (pg->flags & SDSM_PAGE_SPARE)
		pg->flags &= ~SDSM_PAGE_SPARE;
	else if (!pg->copy)
		pg->copy = sdsm_copy_alloc_nofail(GFP_HIGHUSER);
	else
		fresh = false;
	if (!page) {
		clear_highpage(pg->copy);
	} else if (!(fresh && sdsm_install_received(c->in_msg, &pg->copy))) {
		copy_highpage(pg->copy, c->in_page);
		sdsm_cost(SDSM_STAT_COST_COPIES);
	}
}

/*
 * Check, then apply the halves of the received DIFF or PART to the home
 * copy: all or nothing.  Return 0 or -EPROTO.
 */
static int sdsm_rc_apply_halves(struct sdsm_rctx *c)
{
	u32 len[SDSM_WIRE_RC_HALVES], off = 0;
	int ret = 0;
	unsigned int h;
	u8 *diff, *home;

	for (h = 0; h < SDSM_WIRE_RC_HALVES; h++) {
		len[h] = be16_to_cpu(c->in->diff_len[h]);
		off += len[h];
	}
	if (!c->in_page)
		return off ? -EPROTO : 0;	/* a DIFF of the home copy */
	if (off > PAGE_SIZE)
		return -EPROTO;
	diff = kmap_local_page(c->in_page);
	for (h = 0, off = 0; h < SDSM_WIRE_RC_HALVES && !ret; off += len[h++])
		if (len[h] && sdsm_rc_diff_check(diff + off, len[h],
						 SDSM_RC_HALF))
			ret = -EPROTO;
	if (ret)
		goto out;
	if (!c->rs->home_copy)
		c->rs->home_copy = sdsm_copy_alloc_nofail(GFP_HIGHUSER |
							  __GFP_ZERO);
	home = kmap_local_page(c->rs->home_copy);
	for (h = 0, off = 0; h < SDSM_WIRE_RC_HALVES; off += len[h++])
		if (len[h])
			sdsm_rc_diff_apply(home + h * SDSM_RC_HALF,
					   SDSM_RC_HALF, diff + off, len[h]);
	kunmap_local(home);
out:
	kunmap_local(diff);
	return ret;
}

static int sdsm_rc_op_apply(void *priv, const struct sdsm_rc_msg *msg)
{
	return sdsm_rc_apply_halves(priv);
}

static int sdsm_rc_op_twin(void *priv)
{
	struct sdsm_rctx *c = priv;
	struct page *twin;

	if (WARN_ON_ONCE(!c->pg->copy || c->rs->twin))
		return -EPROTO;
	/* The home copy itself (sdsm_rc_alias_home()): nothing to diff. */
	if (sdsm_rc_aliased(c))
		return 0;
	twin = alloc_page(GFP_HIGHUSER | __GFP_ACCOUNT | __GFP_RETRY_MAYFAIL |
			  __GFP_NOWARN);
	sdsm_cost(SDSM_STAT_COST_ALLOCS);
	if (!twin)
		return -ENOMEM;
	copy_highpage(twin, c->pg->copy);
	sdsm_cost(SDSM_STAT_COST_COPIES);
	c->rs->twin = twin;
	sdsm_stat_inc(SDSM_STAT_TWINS);
	return 0;
}

static void sdsm_rc_op_drop_twin(void *priv)
{
	struct sdsm_rctx *c = priv;

	if (c->rs->twin)
		__free_page(c->rs->twin);
	c->rs->twin = NULL;
}

static void sdsm_rc_op_map(void *priv, enum sdsm_proto_map how)
{
	struct sdsm_rctx *c = priv;

	/* RW: the fault inserts the writable PTE.  RO, NONE: zap. */
	if (how == SDSM_PROTO_MAP_RW)
		return;
	unmap_mapping_range(sdsm_mapping(),
			    sdsm_region_offset(c->r) + (c->idx << PAGE_SHIFT),
			    PAGE_SIZE, 1);
	if (how == SDSM_PROTO_MAP_NONE)
		sdsm_stat_inc(SDSM_STAT_INVALIDATIONS_RECEIVED);
}

static void sdsm_rc_op_wake(void *priv, int err)
{
	struct sdsm_rctx *c = priv;

	if (err == -ESTALE)
		sdsm_page_forget_home(c->r, c->pg);
	else if (err)
		sdsm_page_set_err(c->pg, err);
	c->pg->flags &= ~SDSM_PAGE_TIMED;
	wake_up_all(sdsm_page_wq(c->r, c->idx));
}

static void sdsm_rc_op_acked(void *priv)
{
	/* sdsm_rc_call() updates the count the waiters check, then wakes. */
}

static void sdsm_rc_op_error(void *priv, const struct sdsm_rc_msg *msg,
			     const char *why)
{
	pr_warn_ratelimited("release protocol error: %s from node %u, region %llu page %llu: %s\n",
			    sdsm_rc_msg_name(msg->type), msg->src,
			    msg->region, msg->page, why);
}

static const struct sdsm_rc_ops sdsm_rc_mem_ops = {
	.send = sdsm_rc_op_send,
	.install = sdsm_rc_op_install,
	.apply = sdsm_rc_op_apply,
	.twin = sdsm_rc_op_twin,
	.drop_twin = sdsm_rc_op_drop_twin,
	.map = sdsm_rc_op_map,
	.wake = sdsm_rc_op_wake,
	.acked = sdsm_rc_op_acked,
	.error = sdsm_rc_op_error,
};

/*
 * Set up a core call on page @idx of @r, whose home is @home: takes the
 * region's rc_lock (the caller holds the page's mutex); sdsm_rc_done()
 * ends it.
 */
static void sdsm_rc_begin(struct sdsm_rc_ctx *ctx, struct sdsm_rctx *c,
			  struct sdsm_region *r, u64 idx, struct sdsm_page *pg,
			  struct sdsm_rc_slot *rs, u16 home)
{
	*c = (struct sdsm_rctx){ .r = r, .idx = idx, .pg = pg, .rs = rs };
	*ctx = (struct sdsm_rc_ctx){
		.ops = &sdsm_rc_mem_ops,
		.priv = c,
		.local = &r->rc_local,
		.region = r->id,
		.page = idx,
		.self = sdsm_cl.node_id,
		.home = home,
	};
	mutex_lock(&r->rc_lock);
	c->unacked = r->rc_local.unacked;
	c->lost = r->rc_local.lost;
	c->was_rw = rs->st.state == SDSM_RC_NODE_RW;
}

/*
 * End a core call: carry what it changed of the region's unacked and
 * lost counts to the node's, wake a release waiting for them, keep the
 * page's chunk's struct sdsm_rc_sum and pages_cached in step with the
 * page's state.
 */
static void sdsm_rc_done(struct sdsm_rctx *c)
{
	struct sdsm_region *r = c->r;
	struct sdsm_rc_sum *sum = &r->rc_sums[c->idx >> SDSM_CHUNK_SHIFT];
	const struct sdsm_rc_page *st = &c->rs->st;
	bool cached = st->state != SDSM_RC_NODE_I;
	bool rw = st->state == SDSM_RC_NODE_RW;
	int d = (int)(r->rc_local.unacked - c->unacked);

	if (rw != c->was_rw)
		WRITE_ONCE(sum->nr_rw, rw ? sum->nr_rw + 1 : sum->nr_rw - 1);
	if (st->stamp > sum->stamp)
		WRITE_ONCE(sum->stamp, st->stamp);
	if (r->rc_local.lost != c->lost)
		atomic_add(r->rc_local.lost - c->lost, &sdsm_rc_lost);
	/* Counted before rc_lock is dropped: sdsm_rc_region_flush(). */
	if (d > 0)
		atomic_add(d, &sdsm_rc_unacked);
	mutex_unlock(&r->rc_lock);
	if (d < 0 && !atomic_add_return(d, &sdsm_rc_unacked))
		wake_up_all(&sdsm_rc_wq);
	sdsm_page_count_cached(r, c->pg, cached);
}

/*
 * A READ or DIFF reached this node: the home this node serves as (the
 * page's manager decides it, as for MSI), else this node itself, which
 * the core then refuses with ESTALE.  Locks: the page's mutex.
 */
static u16 sdsm_rc_home_of(struct sdsm_region *r, u64 idx,
			   struct sdsm_page *pg, u16 src)
{
	u16 home = sdsm_coh_home(r, idx, pg, src);

	return home == SDSM_PROTO_NO_NODE ? sdsm_cl.node_id : home;
}

/*
 * No memory here for the state of @msg's page: a READ is refused
 * NACK(ENOMEM) (the requester's fault fails once), a DIFF DIFF_ACK(ENOMEM)
 * (the writer's release fails: the diff is lost), a PART dropped (the
 * DIFF after it is refused the same way).  An answer to this node cannot
 * need memory: its state exists since the request.
 */
static void sdsm_rc_nomem(u16 src, const struct sdsm_wire_rc *in,
			  const struct sdsm_rc_msg *msg)
{
	struct sdsm_wire_rc w = {
		.region = in->region,
		.seq = in->seq,
		.page = in->page,
		.err = cpu_to_be16(ENOMEM),
	};

	pr_warn_ratelimited("no memory for page state: %s from node %u refused\n",
			    sdsm_rc_msg_name(msg->type), src);
	if (msg->type == SDSM_RC_MSG_READ)
		w.type = SDSM_RC_MSG_NACK;
	else if (msg->type == SDSM_RC_MSG_DIFF &&
		 !(in->flags & SDSM_WIRE_RC_PART))
		w.type = SDSM_RC_MSG_DIFF_ACK;
	else
		return;
	sdsm_queue(src, SDSM_MSG_RC, &w, sizeof(w), NULL);
}

static void sdsm_rc_recv(u16 src, const struct sdsm_wire_rc *w,
			 const struct sdsm_msg *in)
{
	struct page *page = in->page;
	struct sdsm_rc_msg msg = {
		.region = be32_to_cpu(w->region),
		.page = be64_to_cpu(w->page),
		.seq = be32_to_cpu(w->seq),
		.version = be32_to_cpu(w->version),
		.src = src,
		.dst = sdsm_cl.node_id,
		.type = w->type,
		.flags = w->flags & ~SDSM_WIRE_RC_PART,
		.err = be16_to_cpu(w->err),
	};
	bool part = w->flags & SDSM_WIRE_RC_PART;
	struct mem_cgroup *old_memcg;
	struct sdsm_rc_slot *rs;
	struct sdsm_rc_ctx ctx;
	struct sdsm_region *r;
	struct sdsm_page *pg;
	struct sdsm_rctx c;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */
	bool to_home;
	u16 home;

	r = sdsm_region_get(msg.region);
	if (!r)
		return;
	if (msg.page >= r->npages || !r->rc_chunks ||
	    (part && msg.type != SDSM_RC_MSG_DIFF)) {
		pr_err_ratelimited("node %u: %s for region %u page %llu refused: %s\n",
				   src, sdsm_rc_msg_name(msg.type), r->id,
				   msg.page, r->rc_chunks ? "bad message" :
				   "not a release region");
		sdsm_mem_peer_broken(src, "bad release-consistency message");
		goto out_put;
	}
	old_memcg = set_active_memcg(READ_ONCE(r->memcg));
	pg = sdsm_page_get(r, msg.page, true);
	rs = sdsm_rc_slot_get(r, msg.page, true);
	if (!pg || !rs) {
		sdsm_rc_nomem(src, w, &msg);
		goto out_memcg;
	}
	if (page && src != sdsm_cl.node_id)
		sdsm_stat_add(SDSM_STAT_BYTES_RECEIVED, PAGE_SIZE);
	to_home = sdsm_rc_msg_to_home(msg.type);
	lock = sdsm_page_lock(r, msg.page);
	mutex_lock(lock);
	home = to_home ? sdsm_rc_home_of(r, msg.page, pg, src) : pg->home;
	sdsm_rc_begin(&ctx, &c, r, msg.page, pg, rs, home);
	c.in = w;
	c.in_msg = in;
	c.in_page = page;
	if (to_home && home == sdsm_cl.node_id) {
		pg->flags |= SDSM_PAGE_TOUCHED;
		sdsm_page_homed_here(r, pg);
	}
	if (part) {
		/* Applied at the home now; counted with the DIFF after it. */
		if (home == sdsm_cl.node_id && sdsm_rc_apply_halves(&c))
			sdsm_mem_peer_broken(src, "malformed diff part");
	} else if (to_home) {
		sdsm_rc_home_share(&ctx, &rs->home,
				   sdsm_rc_aliased(&c) ? &rs->st : NULL, &msg);
		sdsm_rc_home_recv(&ctx, &rs->home, &msg);
	} else if (home == SDSM_PROTO_NO_NODE) {
		sdsm_rc_op_error(&c, &msg, "page without a home");
	} else {
		sdsm_rc_node_recv(&ctx, &rs->st, &msg);
	}
	sdsm_rc_done(&c);
	mutex_unlock(lock);
out_memcg:
	set_active_memcg(old_memcg);
out_put:
	sdsm_region_put(r);
}

/*
 * The fault path's core call for a page of a release region whose home is
 * known.  *@sent: a READ left now.  Return SDSM_RC_HIT (the PTE is to be
 * inserted, writable if *@rw), SDSM_RC_WAIT or a negative errno.  Locks:
 * the page's mutex.
 */
static int sdsm_rc_fault_page(struct sdsm_region *r, u64 idx,
			      struct sdsm_page *pg, bool write, bool *sent,
			      bool *rw)
{
	struct sdsm_rc_slot *rs = sdsm_rc_slot_get(r, idx, true);
	struct sdsm_rc_ctx ctx;
	struct sdsm_rctx c;
	u32 seq;
	int rc;

	if (!rs)
		return -ENOMEM;
	sdsm_rc_begin(&ctx, &c, r, idx, pg, rs, pg->home);
	if (pg->home != sdsm_cl.node_id && !sdsm_node_usable(pg->home))
		sdsm_rc_node_peer_down(&ctx, &rs->st, pg->home);
	seq = rs->st.seq;
	rc = sdsm_rc_fault(&ctx, &rs->st, write);
	*sent = rs->st.seq != seq;
	*rw = rs->st.state == SDSM_RC_NODE_RW;
	sdsm_rc_done(&c);
	return rc;
}

/* No READ in flight for a page of a release region.  Locks: none. */
static bool sdsm_rc_settled(struct sdsm_region *r, u64 idx)
{
	struct sdsm_rc_slot *rs = sdsm_rc_slot_get(r, idx, false);

	return !rs || !(READ_ONCE(rs->st.flags) & SDSM_RC_PAGE_PENDING);
}

/* A walk's call on page @idx of @r, whose slot is @rs: non-zero stops it. */
typedef int (*sdsm_rc_slot_fn)(struct sdsm_region *r, u64 idx,
			       struct sdsm_rc_slot *rs, void *arg);
/* Should a walk visit the pages of the chunk summed up in @sum? */
typedef bool (*sdsm_rc_sum_fn)(const struct sdsm_rc_sum *sum, void *arg);

/*
 * Call @fn on the slot of every page of @r whose chunk is allocated (and
 * @want of, if given), in page order, until @fn returns non-zero: return
 * that, or 0 at the end.
 * cond_resched() after each chunk if @resched (the caller may sleep).
 * Takes no lock: @fn takes what it needs.  A fault may publish a chunk
 * meanwhile (sdsm_chunk_get()), hence READ_ONCE(); the walk ends at the
 * rc_used it read first, and a chunk published after that read is one
 * the walk may miss anyway, as one it has passed.
 */
static int sdsm_rc_slot_for_each(struct sdsm_region *r, bool resched,
				 sdsm_rc_sum_fn want, sdsm_rc_slot_fn fn,
				 void *arg)
{
	unsigned long ch, used;
	unsigned int i;
	int ret;

	if (!r->rc_chunks)
		return 0;
	/* Pairs with the cmpxchg of sdsm_rc_slot_get(). */
	used = min(smp_load_acquire(&r->rc_used), r->nchunks);
	for (ch = 0; ch < used; ch++) {
		struct sdsm_rc_chunk *chunk = READ_ONCE(r->rc_chunks[ch]);

		if (!chunk || (want && !want(&r->rc_sums[ch], arg)))
			continue;
		for (i = 0; i < SDSM_CHUNK_PAGES; i++) {
			u64 idx = ((u64)ch << SDSM_CHUNK_SHIFT) + i;

			if (idx >= r->npages)
				break;
			ret = fn(r, idx, &chunk->pages[i], arg);
			if (ret)
				return ret;
		}
		if (resched)
			cond_resched();
	}
	return 0;
}

/*
 * Flush page @idx of @r if it was written in this interval, unless the
 * page is exclusive to this node, its home (sdsm_rc_flush_skip()).
 */
static int sdsm_rc_slot_flush(struct sdsm_region *r, u64 idx,
			      struct sdsm_rc_slot *rs, void *arg)
{
	struct sdsm_rc_ctx ctx;
	struct sdsm_page *pg;
	struct sdsm_rctx c;
	struct mutex *lock;	/* the page's */

	if (READ_ONCE(rs->st.state) != SDSM_RC_NODE_RW)
		return 0;
	pg = sdsm_page_get(r, idx, false);
	if (!pg)
		return 0;
	/*
	 * The test of sdsm_rc_flush_skip() below, without the locks, for the
	 * common case: a READ that shares the page after it was read here
	 * closes the home's interval itself (sdsm_rc_home_share()).
	 */
	if (READ_ONCE(pg->home) == sdsm_cl.node_id &&
	    !READ_ONCE(rs->home.shared) && READ_ONCE(pg->copy) &&
	    READ_ONCE(pg->copy) == READ_ONCE(rs->home_copy)) {
		sdsm_stat_inc(SDSM_STAT_RC_EXCLUSIVE_SKIPS);
		return 0;
	}
	lock = sdsm_page_lock(r, idx);
	mutex_lock(lock);
	sdsm_rc_begin(&ctx, &c, r, idx, pg, rs, pg->home);
	/* Exclusive to this home: stays writable, no DIFF to itself. */
	if (sdsm_rc_aliased(&c) && sdsm_rc_flush_skip(&ctx, &rs->home))
		sdsm_stat_inc(SDSM_STAT_RC_EXCLUSIVE_SKIPS);
	else
		sdsm_rc_flush(&ctx, &rs->st);
	sdsm_rc_done(&c);
	mutex_unlock(lock);
	return 0;
}

/*
 * A chunk none of whose pages is written in this interval has nothing to
 * flush.  The caller's own writes faulted before it got here; a page that
 * another thread starts to write meanwhile belongs to the next interval.
 */
static bool sdsm_rc_sum_written(const struct sdsm_rc_sum *sum, void *arg)
{
	return READ_ONCE(sum->nr_rw);
}

/*
 * Flush every page of @r written in this interval (sdsm_rc_flush()).
 *
 * The walk skips, without a lock, a page that another core call took out
 * of RW: a release of another thread, or an acquire whose notice found
 * the page dirty and stale.  Its diff holds this thread's writes too, so
 * this release must wait for its DIFF_ACK before publishing.  That call
 * counts the diff in sdsm_rc_unacked before it drops rc_lock
 * (sdsm_rc_done()): taking rc_lock after the walk waits for any such call
 * still running, and makes its count visible to the caller's wait.
 */
static void sdsm_rc_region_flush(struct sdsm_region *r, void *arg)
{
	if (!r->rc_chunks)
		return;
	sdsm_rc_slot_for_each(r, true, sdsm_rc_sum_written, sdsm_rc_slot_flush,
			      NULL);
	mutex_lock(&r->rc_lock);
	mutex_unlock(&r->rc_lock);
}

/**
 * sdsm_rc_release - make this node's writes to release regions visible
 *
 * A release (lock release, barrier arrival) first sends the diff of every
 * page written since the last one to its home and waits until every diff
 * is acknowledged; then it may publish its write notices.  The wait is
 * bounded by fault_timeout_ms and killable.
 *
 * Return: 0; -EIO if a diff was refused or lost with its home meanwhile
 * (those writes are gone); -ETIMEDOUT; -EINTR (fatal signal).
 */
int sdsm_rc_release(void)
{
	int lost = atomic_read(&sdsm_rc_lost);
	long left;

	if (!sdsm_rc_in_use())
		return 0;
	sdsm_region_for_each(sdsm_rc_region_flush, NULL);
	/* Diffs to this node (its own pages) need no worker. */
	sdsm_queue_drain_self();
	left = wait_event_killable_timeout(sdsm_rc_wq,
					   !atomic_read(&sdsm_rc_unacked),
					   msecs_to_jiffies(sdsm_fault_timeout_ms));
	if (left < 0)
		return -EINTR;
	if (!left)
		return -ETIMEDOUT;
	return atomic_read(&sdsm_rc_lost) != lost ? -EIO : 0;
}

struct sdsm_rc_collect {
	struct sdsm_rc_publish *pub;
	u64 since;		/* of the region walked */
	int err;
};

/*
 * Merge the notice of page @idx of @r, if any and stamped after the
 * region's @since, into @arg's notices.
 */
static int sdsm_rc_slot_collect(struct sdsm_region *r, u64 idx,
				struct sdsm_rc_slot *rs, void *arg)
{
	struct sdsm_rc_collect *col = arg;
	/* Racing rises are stamped after the clock read: published next. */
	u32 need = READ_ONCE(rs->st.need);
	u64 stamp = READ_ONCE(rs->st.stamp);
	int ret;

	if (!need || stamp <= col->since)
		return 0;
	ret = sdsm_rc_keep_max(&col->pub->notices,
			       sdsm_rc_notice_key(r->id, idx), need, 0, true);
	if (ret < 0)
		return ret;
	col->pub->nr += ret;	/* 1: a page not gathered before */
	return 0;
}

/* A chunk whose knowledge last rose before @arg's since has none to add. */
static bool sdsm_rc_sum_rose(const struct sdsm_rc_sum *sum, void *arg)
{
	const struct sdsm_rc_collect *col = arg;

	return READ_ONCE(sum->stamp) > col->since;
}

/*
 * The notices of @r into @arg's, those stamped after what the object was
 * told of @r; after an error, no region is walked.
 */
static void sdsm_rc_region_collect(struct sdsm_region *r, void *arg)
{
	struct sdsm_rc_collect *col = arg;
	struct sdsm_rc_publish *pub = col->pub;
	void *v = NULL;
	bool keep;
	u64 clock;

	if (col->err || !r->rc_chunks)
		return;
	/*
	 * Every rise stamped up to @clock is complete once rc_lock is taken
	 * (sdsm_rc_begin()): none is missed by the lockless walk.
	 */
	mutex_lock(&r->rc_lock);
	clock = r->rc_local.clock;
	mutex_unlock(&r->rc_lock);
	/* A clock from 0 (sdsm_rc_region_init()): @r is published whole. */
	keep = clock >= BIT_ULL(SDSM_RC_CLOCK_SHIFT);
	if (keep)
		v = xa_load(pub->since, r->id);
	col->since = xa_is_value(v) ? xa_to_value(v) : 0;
	col->err = sdsm_rc_slot_for_each(r, true, sdsm_rc_sum_rose,
					 sdsm_rc_slot_collect, col);
	/* Not kept: the next release to the object publishes all of @r. */
	if (!col->err && keep)
		xa_store(&pub->clocks, r->id, xa_mk_value(clock), GFP_KERNEL);
}

/**
 * sdsm_rc_knowledge - gather this node's write notices for a release
 * @pub: the release: @pub->since, the clocks of this node's previous
 *	publish to the same object (lock, barrier, futex), by region (empty:
 *	all the node knows); notices go into @pub->notices, and each
 *	region's clock now into @pub->clocks, the object's next @since if
 *	this publish reaches its manager
 *
 * Every page of a release region whose released version this node knows
 * (its own diffs' and what its acquires brought), keeping the larger
 * version of each page, only those whose knowledge rose since @since
 * (what the object was told before, it keeps).  Either way what it
 * knows stays transitive (Documentation/protocol.rst, "Publishing").
 *
 * Return: 0 or -ENOMEM.
 */
int sdsm_rc_knowledge(struct sdsm_rc_publish *pub)
{
	struct sdsm_rc_collect col = { .pub = pub };

	if (sdsm_rc_in_use())
		sdsm_region_for_each(sdsm_rc_region_collect, &col);
	return col.err;
}

/**
 * sdsm_rc_notice - apply one write notice at an acquire
 * @region: region id
 * @page: page index
 * @version: the version released
 * @clock: set to the region's clock (struct sdsm_rc_local) before the
 *	notice; a notice that raised this node's knowledge of the page
 *	stamped it with @clock + 1
 *
 * A copy older than @version is invalidated (sdsm_rc_acquire()); the
 * notice is kept even for a page this node never used, to be published
 * again.
 *
 * Return: 1 if the notice raised what this node knows of the page, 0 if
 * not; -ENOENT (no such release region here: nothing to do); -EINVAL
 * (page out of the region); -ENOMEM.
 */
int sdsm_rc_notice(u32 region, u64 page, u32 version, u64 *clock)
{
	struct sdsm_region *r = sdsm_region_get(region);
	struct sdsm_rc_slot *rs;
	struct sdsm_rc_ctx ctx;
	struct sdsm_page *pg;
	struct sdsm_rctx c;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */
	int ret = 0;

	if (!r)
		return -ENOENT;
	if (!r->rc_chunks) {
		ret = -ENOENT;
		goto out;
	}
	if (page >= r->npages) {
		ret = -EINVAL;
		goto out;
	}
	pg = sdsm_page_get(r, page, true);
	rs = sdsm_rc_slot_get(r, page, true);
	if (!pg || !rs) {
		ret = -ENOMEM;
		goto out;
	}
	lock = sdsm_page_lock(r, page);
	mutex_lock(lock);
	sdsm_rc_begin(&ctx, &c, r, page, pg, rs, pg->home);
	*clock = r->rc_local.clock;
	if (sdsm_rc_acquire(&ctx, &rs->st, version))
		sdsm_stat_inc(SDSM_STAT_RC_INVALIDATIONS);
	ret = r->rc_local.clock != *clock;
	sdsm_rc_done(&c);
	mutex_unlock(lock);
out:
	sdsm_region_put(r);
	return ret;
}

/* Node @dead is gone: pages of @r homed there (sdsm_rc_node_peer_down()). */
static void sdsm_rc_page_peer_down(struct sdsm_region *r, u64 idx,
				   struct sdsm_page *pg, u16 dead)
{
	struct sdsm_rc_slot *rs = sdsm_rc_slot_get(r, idx, false);
	struct sdsm_rc_ctx ctx;
	struct sdsm_rctx c;

	if (!rs || pg->home != dead)
		return;
	sdsm_rc_begin(&ctx, &c, r, idx, pg, rs, dead);
	sdsm_rc_node_peer_down(&ctx, &rs->st, dead);
	sdsm_rc_done(&c);
}

/* Free the twin and the home copy of page @idx of @r, a region freed. */
static int sdsm_rc_slot_free(struct sdsm_region *r, u64 idx,
			     struct sdsm_rc_slot *rs, void *arg)
{
	if (rs->twin)
		__free_page(rs->twin);
	if (rs->home_copy)
		__free_page(rs->home_copy);
	return 0;
}

/* Free what the release state of @r holds (its region is freed). */
static void sdsm_rc_region_free(struct sdsm_region *r)
{
	unsigned long ch;

	if (!r->rc_chunks)
		return;
	/* As sdsm_mem_region_free(): no cond_resched(). */
	sdsm_rc_slot_for_each(r, false, NULL, sdsm_rc_slot_free, NULL);
	for (ch = 0; ch < r->nchunks; ch++) {
		if (r->rc_chunks[ch])
			free_pages_exact(r->rc_chunks[ch],
					 sizeof(*r->rc_chunks[ch]));
	}
	/* Diffs of its pages still unacknowledged will never be. */
	if (r->rc_local.unacked &&
	    !atomic_sub_return(r->rc_local.unacked, &sdsm_rc_unacked))
		wake_up_all(&sdsm_rc_wq);
	atomic_dec(&sdsm_rc_regions);
}

static void sdsm_mem_dispatch(const struct sdsm_msg *msg)
{
	struct sdsm_peer *peer = msg->peer;
	const void *payload = msg->payload;
	struct page *page = msg->page;
	u16 type = msg->type;
	u32 len = msg->len;
	union {
		struct sdsm_wire_coh coh;
		struct sdsm_wire_home home;
		struct sdsm_wire_rc rc;
		struct sdsm_wire_region region;
	} u;

	switch (type) {
	case SDSM_MSG_COH:
		if (peer->id != sdsm_cl.node_id &&
		    unlikely(sdsm_inject_take(&sdsm_inject_short_msgs)))
			len = 0;
		if (len < sizeof(u.coh))
			goto short_msg;
		memcpy(&u.coh, payload, sizeof(u.coh));
		if (u.coh.data == SDSM_WIRE_DATA_PAGE && !page) {
			sdsm_mem_peer_broken(peer->id,
					     "coherence message without its page");
			return;
		}
		sdsm_coh_recv(peer->id, &u.coh, msg);
		return;
	case SDSM_MSG_RC:
		if (len < sizeof(u.rc))
			goto short_msg;
		memcpy(&u.rc, payload, sizeof(u.rc));
		if ((u.rc.data == SDSM_WIRE_DATA_PAGE ||
		     (u.rc.type == SDSM_RC_MSG_DIFF &&
		      (u.rc.diff_len[0] || u.rc.diff_len[1]))) && !page) {
			sdsm_mem_peer_broken(peer->id,
					     "release message without its page");
			return;
		}
		sdsm_rc_recv(peer->id, &u.rc, msg);
		return;
	case SDSM_MSG_HANDBACK:
		if (len < sizeof(u.region))
			goto short_msg;
		memcpy(&u.region, payload, sizeof(u.region));
		sdsm_handback_recv(peer->id, be64_to_cpu(u.region.cookie));
		return;
	case SDSM_MSG_HOME_REQ:
	case SDSM_MSG_HOME_REP:
		if (len < sizeof(u.home))
			goto short_msg;
		memcpy(&u.home, payload, sizeof(u.home));
		if (type == SDSM_MSG_HOME_REQ)
			sdsm_home_req_recv(peer->id, &u.home);
		else if (!u.home.cookie)
			sdsm_home_rep_recv(peer->id, &u.home);
		else
			sdsm_region_msg(peer, type, payload, len);
		return;
	default:
		sdsm_region_msg(peer, type, payload, len);
		return;
	}
short_msg:
	pr_err_ratelimited("node %u: short message type %u (%u bytes)\n",
			   peer->id, type, len);
	sdsm_mem_peer_broken(peer->id, "short coherence message");
}

static void sdsm_mem_handler(const struct sdsm_msg *msg)
{
	sdsm_mem_dispatch(msg);
	/*
	 * A message that completes a transaction homed here (the last ACK of
	 * an invalidation, a FETCH's data) queued the grant to this node:
	 * deliver it now rather than after a worker's wake-up.
	 */
	sdsm_queue_drain_self();
}

static const u16 sdsm_mem_msg_types[] = {
	SDSM_MSG_COH, SDSM_MSG_HOME_REQ, SDSM_MSG_HOME_REP, SDSM_MSG_RC,
	SDSM_MSG_REGION_CLAIM, SDSM_MSG_REGION_ADD, SDSM_MSG_REGION_PREPARE,
	SDSM_MSG_REGION_COMMIT, SDSM_MSG_REGION_ABORT, SDSM_MSG_POLICY,
	SDSM_MSG_REPLY, SDSM_MSG_REGION_QUERY, SDSM_MSG_HANDBACK,
};

/* ------------------------------------------------------------------ */
/* Faults                                                              */

/* Nothing in flight for the page any more (or it failed). */
static bool sdsm_page_settled(struct sdsm_region *r, u64 idx,
			      struct sdsm_page *pg)
{
	if (READ_ONCE(pg->err))
		return true;
	if (READ_ONCE(pg->flags) & SDSM_PAGE_HOME_ASKED)
		return false;
	if (r->rc_chunks)
		return sdsm_rc_settled(r, idx);
	return READ_ONCE(pg->node.pending) == SDSM_PROTO_REQ_NONE;
}

/*
 * The page's home if its policy computes it (its manager), unless a
 * computed home refused it already (the manager knows better then).
 * Return: true if the home is known now.  Locks: the page's mutex.
 */
static bool sdsm_page_home_compute(struct sdsm_region *r, u64 idx,
				   struct sdsm_page *pg)
{
	if (pg->home != SDSM_PROTO_NO_NODE)
		return true;
	if ((pg->flags & SDSM_PAGE_HOME_STALE) ||
	    !sdsm_page_home_computable(r, idx))
		return false;
	sdsm_page_set_home(r, pg, sdsm_page_manager(r, idx));
	return true;
}

/*
 * Make @spare the page's spare, the page a grant installs as its copy,
 * unless it has one or a copy already; else free it.  Locks: the page's
 * mutex.
 */
static void sdsm_page_take_spare(struct sdsm_page *pg, struct page *spare)
{
	if (!pg->copy) {
		pg->copy = spare;
		pg->flags |= SDSM_PAGE_SPARE;
		spare = NULL;
	}
	if (spare)
		__free_page(spare);
}

/*
 * Whether a fault on page @idx needs a spare: a page of its own for the
 * node copy.  Not if it has a copy, nor on the page's home when the home
 * copy exists and sdsm_op_own_grant() will map it rather than fill a page:
 * for a read, or for a write while nothing but the directory holds it.
 * Under the page's mutex that is what the grant in the fault's call will
 * find (a count of 1 stays 1, sdsm_home_copy_own()); a grant parked
 * behind a busy directory that then finds it shared allocates in the
 * handler, as an install without a spare does.  Unlocked, a hint the
 * fault checks again under the mutex.
 */
static bool sdsm_fault_wants_spare(struct sdsm_region *r, u64 idx,
				   struct sdsm_page *pg, bool write)
{
	struct sdsm_home_page *hp;
	struct page *home;

	if (READ_ONCE(pg->copy))
		return false;
	if (r->rc_chunks || READ_ONCE(pg->home) != sdsm_cl.node_id)
		return true;
	hp = sdsm_home_page_get(r, idx, false);
	home = hp ? READ_ONCE(hp->home_copy) : NULL;
	return !home || (write && page_count(home) > 1);
}

/*
 * Page @idx's home, if this node can tell it without asking another: known
 * here, computed from the policy, or decided as the page's manager (a
 * first touch placed now if @assign, else only a home fixed already: a
 * job's heap is managed by its node, and the rows its other nodes wrote
 * first are homed there).  Return: 0 (@pg->home is set), -EREMOTE if
 * another node manages the page, -ENOENT if !@assign and the page has no
 * home yet, or another negative errno.  Locks: the page's mutex.
 */
static int sdsm_page_home_here(struct sdsm_region *r, u64 idx,
			       struct sdsm_page *pg, bool assign)
{
	int home;

	if (sdsm_page_home_compute(r, idx, pg))
		return 0;
	if (sdsm_page_manager(r, idx) != sdsm_cl.node_id)
		return -EREMOTE;
	home = sdsm_manager_decide(r, idx, pg, sdsm_cl.node_id, assign);
	if (home < 0)
		return home;
	sdsm_page_set_home(r, pg, home);
	return 0;
}

/*
 * Resolve the page's home.  Return: 0 known, 1 asked the manager (wait),
 * or a negative errno.  Locks: the page's mutex.
 */
static int sdsm_fault_home(struct sdsm_region *r, u64 idx,
			   struct sdsm_page *pg)
{
	struct sdsm_wire_home w = {};
	u16 mgr;
	int rc;

	if (pg->home != SDSM_PROTO_NO_NODE)
		return 0;
	if (pg->flags & SDSM_PAGE_HOME_ASKED)
		return 1;
	rc = sdsm_page_home_here(r, idx, pg, true);
	if (rc != -EREMOTE)
		return rc;
	mgr = sdsm_page_manager(r, idx);
	if (!sdsm_node_usable(mgr))
		return -EHOSTDOWN;
	w.region = cpu_to_be32(r->id);
	w.flags = cpu_to_be32(SDSM_WIRE_HOME_ASSIGN);
	w.page = cpu_to_be64(idx);
	pg->flags |= SDSM_PAGE_HOME_ASKED;
	pg->req_us = sdsm_now_us();
	sdsm_queue(mgr, SDSM_MSG_HOME_REQ, &w, sizeof(w), NULL);
	return 1;
}

/*
 * The protocol's call for a fault on page @c->idx.  On the page's home
 * the directory's state is passed too, and an access that needs no other
 * node is granted in the call, without a READ or WRITE to this node and
 * a grant back (sdsm_proto_fault_home(), sdsm_op_own_grant()): what a
 * node's first touch of its own pages costs.  One that needs another
 * node's copy taken back starts its transaction here instead of sending
 * itself a READ or WRITE, and is granted where the answer arrives
 * (sdsm_coh_home_recv()).  The home is checked as a request to it would
 * be (sdsm_coh_home()).  Locks: the page's mutex.
 */
static int sdsm_fault_proto(struct sdsm_proto_ctx *ctx, struct sdsm_pctx *c,
			    bool write)
{
	struct sdsm_region *r = c->r;
	struct sdsm_page *pg = c->pg;
	struct mem_cgroup *old_memcg;
	u8 state = pg->node.state;
	int rc;

	if (pg->home != sdsm_cl.node_id ||
	    sdsm_coh_home(r, c->idx, pg, sdsm_cl.node_id) != sdsm_cl.node_id)
		return sdsm_proto_fault(ctx, &pg->node, write);
	/* The directory's memory is the region's, as in its handler. */
	old_memcg = set_active_memcg(READ_ONCE(r->memcg));
	c->hp = sdsm_home_page_get(r, c->idx, true);
	set_active_memcg(old_memcg);
	/* No memory for it: the request to itself is refused, ENOMEM. */
	if (!c->hp)
		return sdsm_proto_fault(ctx, &pg->node, write);
	ctx->self_node = &pg->node;
	rc = sdsm_proto_fault_home(ctx, &pg->node, &c->hp->dir, write);
	if (rc == SDSM_PROTO_HIT && pg->node.state != state) {
		pg->flags |= SDSM_PAGE_TOUCHED;
		sdsm_page_homed_here(r, pg);
		sdsm_stat_inc(SDSM_STAT_OWN_GRANTS);
		if (state == SDSM_PROTO_NODE_S)
			sdsm_stat_inc(SDSM_STAT_UPGRADES);
	} else if (rc == SDSM_PROTO_WAIT &&
		   c->hp->dir.busy != SDSM_PROTO_TXN_IDLE &&
		   c->hp->dir.requester == sdsm_cl.node_id) {
		/* Its transaction started here, as its request's would. */
		pg->flags |= SDSM_PAGE_TOUCHED;
		sdsm_page_homed_here(r, pg);
	}
	return rc;
}

/*
 * Ask for a read copy of page @idx of @r ahead of any fault, if that costs
 * no waiting: the page's mutex is free, its home is known without asking
 * (sdsm_page_home_here(), placing nothing) and is another, live node, and
 * a page for the copy can be had: from the spare pool, as a fault's, else
 * allocated without retrying (charged to the faulting task).  Return: 1
 * if a READ was sent, -EAGAIN if the page's home is not known here yet
 * (its first touch, or the manager's answer to a fault, will tell), else
 * 0.
 */
static int sdsm_prefetch_page(struct sdsm_region *r, u64 idx)
{
	struct mutex *lock = sdsm_page_lock(r, idx);	/* the page's */
	struct sdsm_proto_ctx ctx;
	struct page *spare = NULL;
	struct sdsm_page *pg;
	struct sdsm_pctx c;
	int sent = 0;

	pg = sdsm_page_get(r, idx, true);
	if (!pg || READ_ONCE(pg->node.state) != SDSM_PROTO_NODE_I)
		return 0;
	if (!READ_ONCE(pg->copy)) {
		spare = sdsm_spare_get(GFP_HIGHUSER | __GFP_ACCOUNT |
				       __GFP_NORETRY | __GFP_NOWARN);
		if (!spare)
			return 0;
	}
	if (!mutex_trylock(lock)) {
		if (spare)
			__free_page(spare);
		return 0;
	}
	if (spare)
		sdsm_page_take_spare(pg, spare);
	if (pg->err)
		goto unlock;
	/* Not placed: a first touch, which places the page, is a fault's. */
	if ((pg->flags & SDSM_PAGE_HOME_ASKED) ||
	    sdsm_page_home_here(r, idx, pg, false)) {
		sent = -EAGAIN;
		goto unlock;
	}
	if (pg->home == sdsm_cl.node_id || !sdsm_node_usable(pg->home))
		goto unlock;
	sdsm_pctx_init(&ctx, &c, r, idx, pg, pg->home);
	sent = sdsm_proto_prefetch(&ctx, &pg->node);
	if (sent) {
		/* Timed by the fault that waits for it, if any. */
		pg->req_us = sdsm_now_us();
		pg->flags &= ~SDSM_PAGE_TIMED;
		pg->flags |= SDSM_PAGE_PREFETCHED;
		sdsm_stat_inc(SDSM_STAT_PREFETCHES);
	}
unlock:
	mutex_unlock(lock);
	return sent;
}

/* A fault found page @pg's copy asked for ahead.  Locks: the page's mutex. */
static void sdsm_prefetch_used(struct sdsm_page *pg)
{
	if (!(pg->flags & SDSM_PAGE_PREFETCHED))
		return;
	pg->flags &= ~SDSM_PAGE_PREFETCHED;
	sdsm_stat_inc(SDSM_STAT_PREFETCH_HITS);
}

/*
 * A read fault at page @idx of @r (remote home, answered here or sent),
 * after which pages up to @reach are mapped (around it, or before): if it
 * continues one of the region's sequential streams, read the pages after
 * @reach ahead, one READ each, queued behind the fault's own; those for
 * @home, the faulting page's home, leave as trains (sdsm_queue_cork()).
 * A stream's
 * window starts at 4 pages once two of its faults are consecutive and
 * doubles up to prefetch_pages; each page is asked for once per stream.
 * The window is counted from @reach, not @idx: once fault-around maps the
 * pages that arrived, the next fault is past them, and a window counted
 * from @idx would have asked for nothing beyond it.
 * SDSM_RA_STREAMS streams are followed at once, so reads that alternate
 * between arrays (A and B of a matrix multiply) each keep theirs.  A
 * fault up to SDSM_RA_GAP pages past where its stream expected it
 * continues it too (a loop over every second page reads ahead every
 * page); one that continues none starts a stream in place of the least
 * recently used one, so random access, and strides of more than
 * SDSM_RA_GAP + 1 pages, prefetch nothing.  The window
 * stops short of a page whose home is not known here yet: the fault that
 * asks the manager for it learns the homes of the pages after it too
 * (sdsm_home_next_recv()), and its stream reads ahead from there.  Locks:
 * takes @r->ra_lock, then (not under it) other pages' mutexes.
 */
static void sdsm_prefetch(struct sdsm_region *r, u64 idx, u64 reach,
			  u16 home)
{
	struct sdsm_ra_stream *s, *lru = r->ra, *last = r->ra + SDSM_RA_STREAMS;
	unsigned int max = READ_ONCE(prefetch_pages);
	u64 j = 0, end = 0;
	bool corked;

	if (!max)
		return;
	spin_lock(&r->ra_lock);
	r->ra_clock++;
	/* The same fault again, after a retry: the window stays. */
	for (s = r->ra; s < last; s++)
		if (s->end && idx == s->last)
			goto extend;
	for (s = r->ra; s < last; s++) {
		/*
		 * Pages in between may have been mapped around a fault, or
		 * skipped by a strided loop (SDSM_RA_GAP).
		 */
		if (s->end && idx >= s->next &&
		    idx <= max(s->end, s->next) + SDSM_RA_GAP)
			break;
		if (s->used < lru->used)
			lru = s;
	}
	if (s == last) {
		*lru = (struct sdsm_ra_stream){ .last = idx, .next = reach + 1,
						.end = reach + 1,
						.used = r->ra_clock };
		goto unlock;
	}
	s->last = idx;
	s->win = min(s->win ? 2 * s->win : 4, max);
extend:
	s->next = max(s->next, reach + 1);
	s->used = r->ra_clock;
	if (!s->win)
		goto unlock;
	end = min(reach + 1 + s->win, r->npages);
	j = max(s->end, reach + 1);
	if (j < end)
		s->end = end;
unlock:
	spin_unlock(&r->ra_lock);
	corked = j < end && sdsm_queue_cork(home);
	for (; j < end; j++)
		if (sdsm_prefetch_page(r, j) == -EAGAIN)
			break;
	if (corked)
		sdsm_queue_uncork(home);
	if (j >= end)
		return;
	spin_lock(&r->ra_lock);
	if (s->last == idx && s->end == end)
		s->end = j;
	spin_unlock(&r->ra_lock);
}

/*
 * The protection of a read-only PTE in @vma.  A VMA mprotect()ed to
 * PROT_WRITE alone may be read too (x86 has no write-only pages, and the
 * kernel's own write-protected PTEs of such a VMA are readable):
 * vm_get_page_prot() of its flags without VM_WRITE would be PAGE_NONE,
 * and a read would fault again for ever on the PTE that inserted.
 */
static pgprot_t sdsm_ro_prot(struct vm_area_struct *vma)
{
	unsigned long flags = vma->vm_flags & ~VM_WRITE;

	if (vma->vm_flags & VM_WRITE)
		flags |= VM_READ;
	return vm_get_page_prot(flags);
}

/* What sdsm_fault_around() hands sdsm_around_pte(). */
struct sdsm_around {
	struct vm_area_struct *vma;
	struct sdsm_region *r;
	unsigned long start;	/* the address of page @first */
	u64 first;
	u64 idx;		/* the faulting page, mapped already */
	u64 reach;		/* pages [idx, reach] are all mapped */
	pgprot_t prot;
	unsigned int mapped;
};

/*
 * One PTE of the block, under its page table's lock: map page j's copy if
 * the PTE is empty and the page is readable here.  The page's mutex is only
 * tried (the PTE lock is held; an invalidation holds the mutex while it
 * waits for this PTE lock), as filemap_map_pages() tries the folio lock.
 */
static int sdsm_around_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct sdsm_around *a = data;
	u64 j = a->first + ((addr - a->start) >> PAGE_SHIFT);
	struct sdsm_page *pg;
	struct page *copy;
	struct mutex *lock;	/* page j's */

	if (j == a->idx || !pte_none(*pte))
		goto mapped;
	pg = sdsm_page_get(a->r, j, false);
	if (!pg || READ_ONCE(pg->node.state) == SDSM_PROTO_NODE_I)
		return 0;
	lock = sdsm_page_lock(a->r, j);
	if (!mutex_trylock(lock))
		return 0;
	copy = sdsm_page_copy(pg);
	if (pg->node.state == SDSM_PROTO_NODE_I || !copy || pg->err ||
	    pg->node.deferred ||
	    (pg->node.flags & (SDSM_PROTO_NODE_HELD | SDSM_PROTO_NODE_DEAD))) {
		mutex_unlock(lock);
		return 0;
	}
	/* What insert_pfn() sets: a special PTE, no struct page use. */
	set_pte_at(a->vma->vm_mm, addr, pte,
		   pte_mkspecial(pfn_pte(page_to_pfn(copy), a->prot)));
	update_mmu_cache(a->vma, addr, pte);
	sdsm_prefetch_used(pg);
	a->mapped++;
	mutex_unlock(lock);
mapped:
	if (j == a->reach + 1)
		a->reach = j;
	return 0;
}

/*
 * A read fault that mapped page @idx of @r also maps the pages around it
 * that this node holds already, read-only (a write still faults), as
 * filemap_map_pages() does for the page cache: the aligned block of
 * SDSM_FAULT_AROUND pages, inside the VMA, in one walk of the page table
 * under its lock (apply_to_page_range()) rather than a vmf_insert_pfn_prot()
 * per page, each a walk, a lock and a PAT lookup of its own.  The copies
 * are this module's own pages (alloc_page()), write-back like every page
 * of RAM nobody set a memory type for, so the VMA's protection is what
 * that PAT lookup would give.  A page whose mutex is busy, that has no
 * copy, or whose grant is held for a fault of its own is left to that
 * fault.  Return: the last page of the run from @idx that is mapped now,
 * where the next fault of a sequential reader will be past.  Locks:
 * mmap_lock (read, the fault's); takes the page table's lock, and under it
 * tries the pages' mutexes.
 */
static u64 sdsm_fault_around(struct vm_fault *vmf, struct sdsm_region *r,
			     u64 idx)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address & PAGE_MASK;
	u64 first = idx & ~(u64)(SDSM_FAULT_AROUND - 1);
	u64 end = min_t(u64, first + SDSM_FAULT_AROUND, r->npages);
	struct sdsm_around a = {
		.vma = vma, .r = r, .idx = idx, .reach = idx,
		.prot = sdsm_ro_prot(vma),
	};
	/* The VMA's pages below @addr, and from @addr to its end. */
	u64 below = (addr - vma->vm_start) >> PAGE_SHIFT;
	u64 above = (vma->vm_end - addr) >> PAGE_SHIFT;

	/* The block, clipped to the VMA: pages [first, end) of @r. */
	if (idx - first > below)
		first = idx - below;
	if (end - idx > above)
		end = idx + above;
	if (end - first <= 1)
		return idx;
	a.first = first;
	a.start = addr - ((idx - first) << PAGE_SHIFT);
	/* -ENOMEM for a page table: the pages fault one by one instead. */
	apply_to_page_range(vma->vm_mm, a.start, (end - first) << PAGE_SHIFT,
			    sdsm_around_pte, &a);
	if (a.mapped)
		sdsm_stat_add(SDSM_STAT_FAULT_AROUND_PAGES, a.mapped);
	return a.reach;
}

/* Insert @pg's copy, writable if @rw and the VMA allows. */
static vm_fault_t sdsm_fault_insert(struct vm_fault *vmf,
				    struct sdsm_page *pg, bool mkwrite,
				    bool rw)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address & PAGE_MASK;
	pgprot_t prot;

	if (WARN_ON_ONCE(!pg->copy))
		return VM_FAULT_SIGBUS;
	rw = rw && (vma->vm_flags & VM_WRITE);
	prot = rw ? vm_get_page_prot(vma->vm_flags) : sdsm_ro_prot(vma);
	/* Replace the read-only PTE under the page's mutex. */
	if (mkwrite)
		zap_vma_ptes(vma, addr, PAGE_SIZE);
	return vmf_insert_pfn_prot(vma, addr, page_to_pfn(pg->copy), prot);
}

static vm_fault_t sdsm_fault_common(struct vm_fault *vmf, bool mkwrite)
{
	struct vm_area_struct *vma = vmf->vma;
	struct sdsm_region *r = vma->vm_private_data;
	bool write = mkwrite || (vmf->flags & FAULT_FLAG_WRITE);
	u64 idx = vmf->pgoff - (sdsm_region_offset(r) >> PAGE_SHIFT);
	unsigned long addr = vmf->address;
	u64 t0 = ktime_get_ns();
	u64 reach;			/* pages [idx, reach] are mapped */
	struct sdsm_proto_ctx ctx;
	struct page *spare = NULL;
	struct sdsm_page *pg;
	struct sdsm_pctx c;
	struct mutex *lock;		/* the page's, sdsm_page_lock() */
	wait_queue_head_t *wq;
	unsigned long deadline;
	bool sent = false, ahead = false, rc_sent, rc_rw;
	u16 home = 0;
	bool need_spare = false, resume;
	u32 waited;
	vm_fault_t ret;
	long left;
	u32 seq;
	int rc;

	if (idx >= r->npages)
		return VM_FAULT_SIGBUS;
	pg = sdsm_page_get(r, idx, true);
	if (!pg) {
		sdsm_stat_inc(SDSM_STAT_FAULT_ERRORS);
		return VM_FAULT_SIGBUS;	/* no memory, see "Memory" above */
	}
	lock = sdsm_page_lock(r, idx);
	wq = sdsm_page_wq(r, idx);
	trace_sdsm_fault_begin(addr, r->id, idx, write);
again:
	/*
	 * No copy here: the grant needs one.  Charge it to this task's
	 * memory cgroup now, before any request, so a full cgroup fails the
	 * fault with nothing sent and nothing lost.  No OOM kill: the copies
	 * are the region's, killing a process would free none of them.  Not
	 * on the home for a grant of the home copy itself (no page needed).
	 */
	if (!READ_ONCE(pg->copy) &&
	    (need_spare || sdsm_fault_wants_spare(r, idx, pg, write))) {
		spare = sdsm_spare_get(SDSM_SPARE_GFP);
		if (!spare) {
			rc = -ENOMEM;
			goto fail_unlocked;
		}
	}
	mutex_lock(lock);
	if (spare) {
		sdsm_page_take_spare(pg, spare);
		spare = NULL;
	}
	rc = sdsm_page_err(pg);
	/* The home answered NACK(ENOMEM): this fault fails, not the next. */
	if (rc == -ENOMEM)
		pg->err = 0;
	if (rc)
		goto fail;
	rc = sdsm_fault_home(r, idx, pg);
	if (rc < 0)
		goto fail;
	if (!rc && r->rc_chunks) {
		rc = sdsm_rc_fault_page(r, idx, pg, write, &rc_sent, &rc_rw);
		if (rc == SDSM_RC_HIT) {
			ret = sdsm_fault_insert(vmf, pg, mkwrite, rc_rw);
			mutex_unlock(lock);
			if (!sent && !(vmf->flags & FAULT_FLAG_TRIED))
				sdsm_stat_inc(write ?
					      SDSM_STAT_WRITE_FAULTS_LOCAL :
					      SDSM_STAT_READ_FAULTS_LOCAL);
			trace_sdsm_fault_end(addr, r->id, idx, write,
					     ktime_get_ns() - t0, 0);
			return ret;
		}
		if (rc < 0)
			goto fail;
		if (rc_sent) {
			pg->req_us = sdsm_now_us();
			pg->flags |= SDSM_PAGE_TIMED;
			sent = true;
			sdsm_stat_inc(write ? SDSM_STAT_WRITE_FAULTS_REMOTE :
					      SDSM_STAT_READ_FAULTS_REMOTE);
		}
	} else if (!rc) {
		/* The home copy went, or got shared, since the hint. */
		if (!need_spare && sdsm_fault_wants_spare(r, idx, pg, write)) {
			mutex_unlock(lock);
			need_spare = true;
			goto again;
		}
		sdsm_pctx_init(&ctx, &c, r, idx, pg, pg->home);
		if (pg->home != sdsm_cl.node_id && !sdsm_node_usable(pg->home))
			sdsm_proto_node_peer_down(&ctx, &pg->node, pg->home);
		seq = pg->node.seq;
		rc = sdsm_fault_proto(&ctx, &c, write);
		sdsm_page_settle(r, pg);
		/* Its copy is here, or its READ in flight. */
		sdsm_prefetch_used(pg);
		ahead = !write && pg->home != sdsm_cl.node_id;
		home = pg->home;
		if (rc == SDSM_PROTO_HIT) {
			ret = sdsm_fault_insert(vmf, pg, mkwrite,
						pg->node.state ==
						SDSM_PROTO_NODE_M);
			/* The grant is used once this thread runs: end hold. */
			resume = pg->node.deferred && sdsm_hold_used(r, idx);
			mutex_unlock(lock);
			if (resume)
				sdsm_hold_watch_resume(vmf);
			reach = idx;
			if (!write && ret == VM_FAULT_NOPAGE)
				reach = sdsm_fault_around(vmf, r, idx);
			if (ahead)
				sdsm_prefetch(r, idx, reach, home);
			if (!sent && !(vmf->flags & FAULT_FLAG_TRIED))
				sdsm_stat_inc(write ?
					      SDSM_STAT_WRITE_FAULTS_LOCAL :
					      SDSM_STAT_READ_FAULTS_LOCAL);
			trace_sdsm_fault_end(addr, r->id, idx, write,
					     ktime_get_ns() - t0, 0);
			return ret;
		}
		if (rc < 0)
			goto fail;
		if (pg->node.seq != seq) {
			pg->req_us = sdsm_now_us();
			pg->flags |= SDSM_PAGE_TIMED;
			sent = true;
			sdsm_stat_inc(write ? SDSM_STAT_WRITE_FAULTS_REMOTE :
					      SDSM_STAT_READ_FAULTS_REMOTE);
		}
	}
	/* Wait for the request in flight, bounded from when it was sent. */
	waited = sdsm_now_us() - pg->req_us;
	if (waited >= sdsm_fault_timeout_ms * USEC_PER_MSEC) {
		pr_warn_ratelimited("region %u page %llu: no answer from node %u in %u ms: SIGBUS\n",
				    r->id, idx, pg->home,
				    sdsm_fault_timeout_ms);
		rc = -ETIMEDOUT;
		goto fail;
	}
	deadline = jiffies + usecs_to_jiffies(sdsm_fault_timeout_ms *
					      USEC_PER_MSEC - waited);
	mutex_unlock(lock);
	if (ahead)
		sdsm_prefetch(r, idx, idx, home);
	ahead = false;
	/* Home (or manager) here: run the transaction without a worker. */
	sdsm_queue_drain_self();
	if (sdsm_page_settled(r, idx, pg))
		goto again;
	if (vmf->flags & FAULT_FLAG_ALLOW_RETRY) {
		if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
			return VM_FAULT_RETRY;
		/* After the unlock neither vma nor vmf->vma may be used. */
		kref_get(&r->ref);
		mmap_read_unlock(vma->vm_mm);
		wait_event_killable_timeout(*wq, sdsm_page_settled(r, idx, pg),
					    max_t(long, deadline - jiffies, 1));
		trace_sdsm_fault_end(addr, r->id, idx, write,
				     ktime_get_ns() - t0, 1);
		sdsm_region_put(r);
		return VM_FAULT_RETRY;
	}
	left = wait_event_killable_timeout(*wq, sdsm_page_settled(r, idx, pg),
					   max_t(long, deadline - jiffies, 1));
	if (left < 0) {
		rc = -EINTR;
		goto fail_unlocked;
	}
	goto again;

fail:
	mutex_unlock(lock);
fail_unlocked:
	sdsm_stat_inc(SDSM_STAT_FAULT_ERRORS);
	pr_debug("fault at %#lx (region %u page %llu%s) failed: %d\n", addr,
		 r->id, idx, write ? ", write" : "", rc);
	trace_sdsm_fault_end(addr, r->id, idx, write, ktime_get_ns() - t0,
			     rc);
	return VM_FAULT_SIGBUS;
}

/*
 * sdsm_fault_common() counting every sleep of the faulting thread in it:
 * waits for the answer (each wake-up of the hashed waitqueue that sent it
 * back to sleep too), the page mutex, allocations, a send slot.  A
 * voluntary context switch is exactly a sleep that happened.
 */
static vm_fault_t sdsm_fault_counted(struct vm_fault *vmf, bool mkwrite)
{
	unsigned long nvcsw = current->nvcsw;
	vm_fault_t ret = sdsm_fault_common(vmf, mkwrite);

	sdsm_stat_add(SDSM_STAT_COST_WAKEUPS, current->nvcsw - nvcsw);
	return ret;
}

static vm_fault_t sdsm_vm_fault(struct vm_fault *vmf)
{
	return sdsm_fault_counted(vmf, false);
}

static vm_fault_t sdsm_vm_pfn_mkwrite(struct vm_fault *vmf)
{
	vm_fault_t ret = sdsm_fault_counted(vmf, true);

	/*
	 * wp_pfn_shared() goes on to finish_mkwrite_fault() unless told
	 * NOPAGE; after a retry the mmap lock is gone, so say both.
	 */
	if (ret & VM_FAULT_RETRY)
		ret |= VM_FAULT_NOPAGE;
	return ret;
}

/* fork(), split, mremap: one more VMA maps the region. */
static void sdsm_vm_open(struct vm_area_struct *vma)
{
	struct sdsm_region *r = vma->vm_private_data;

	kref_get(&r->ref);
	spin_lock(&r->lock);
	r->nr_maps++;
	spin_unlock(&r->lock);
}

static void sdsm_vm_close(struct vm_area_struct *vma)
{
	struct sdsm_region *r = vma->vm_private_data;

	sdsm_region_unmap(r);
	sdsm_region_put(r);
}

static const struct vm_operations_struct sdsm_vm_ops = {
	.open = sdsm_vm_open,
	.close = sdsm_vm_close,
	.fault = sdsm_vm_fault,
	.pfn_mkwrite = sdsm_vm_pfn_mkwrite,
};

/*
 * mmap of /dev/sdsm: MAP_SHARED only (EINVAL), never executable (EPERM),
 * the range inside one region: ENXIO if no region starts at the offset's
 * region slot, EINVAL if the range runs past the region's end, EACCES
 * without the region's read permission (or its write permission for
 * PROT_WRITE; without it, mprotect() cannot add PROT_WRITE later).
 */
int sdsm_mem_mmap(struct file *file, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	struct sdsm_region *r;
	u64 rel;
	int ret;

	/* MAYSHARE: MAP_SHARED of a read-only file has no VM_SHARED. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -ENXIO;
	r = sdsm_region_get(off >> SDSM_REGION_OFFSET_SHIFT);
	if (!r)
		return -ENXIO;
	rel = off - sdsm_region_offset(r);
	if (rel >= r->length || len > r->length - rel) {
		sdsm_region_put(r);
		return -EINVAL;
	}
	ret = sdsm_region_permission(r, MAY_READ |
				     (vma->vm_flags & VM_WRITE ? MAY_WRITE : 0));
	if (ret) {
		sdsm_region_put(r);
		return ret;
	}
	if (!(vma->vm_flags & VM_WRITE) &&
	    sdsm_region_permission(r, MAY_WRITE))
		vma->vm_flags &= ~VM_MAYWRITE;
	if (!sdsm_region_map(r)) {
		sdsm_region_put(r);
		return -ENXIO;
	}
	if (!READ_ONCE(r->memcg)) {
		/* What handlers allocate for it is charged here from now. */
		struct mem_cgroup *memcg = get_mem_cgroup_from_mm(current->mm);

		if (cmpxchg(&r->memcg, NULL, memcg))
			mem_cgroup_put(memcg);
	}
	/* For the first fault here (see "Spare chunks"); it may do without. */
	if (sdsm_chunk_spare_wanted(r, SDSM_CHUNK_NODE))
		sdsm_chunk_spare_fill(r, SDSM_CHUNK_NODE);
	vma->vm_flags |= VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_ops = &sdsm_vm_ops;
	vma->vm_private_data = r;	/* the reference of sdsm_region_get() */
	return 0;
}

/*
 * The region and page index of @addr in @vma if @vma maps /dev/sdsm, with
 * a reference; NULL otherwise.  Locks: mmap_lock held.
 */
struct sdsm_region *sdsm_vma_region(struct vm_area_struct *vma, u64 *idx,
				    unsigned long addr)
{
	struct sdsm_region *r;

	if (!vma || vma->vm_ops != &sdsm_vm_ops || addr < vma->vm_start ||
	    addr >= vma->vm_end)
		return NULL;
	r = vma->vm_private_data;
	*idx = vma->vm_pgoff - (sdsm_region_offset(r) >> PAGE_SHIFT) +
	       ((addr - vma->vm_start) >> PAGE_SHIFT);
	kref_get(&r->ref);
	return r;
}

/* Free the copies of a region nobody references any more. */
void sdsm_mem_region_free(struct sdsm_region *r)
{
	enum sdsm_chunk_kind kind;
	unsigned long c;
	unsigned int i;

	for (c = 0; c < r->nchunks; c++) {
		struct sdsm_chunk *chunk = r->chunks[c];

		if (!chunk)
			continue;
		/* A spare is freed as a copy: the same pointer. */
		for (i = 0; i < SDSM_CHUNK_PAGES; i++)
			if (chunk->pages[i].copy)
				__free_page(chunk->pages[i].copy);
		free_pages_exact(chunk, sizeof(*chunk));
	}
	for (c = 0; c < r->nchunks; c++) {
		struct sdsm_home_chunk *chunk = r->home_chunks[c];

		if (!chunk)
			continue;
		for (i = 0; i < SDSM_CHUNK_PAGES; i++)
			if (chunk->pages[i].home_copy)
				__free_page(chunk->pages[i].home_copy);
		free_pages_exact(chunk, sizeof(*chunk));
	}
	for (kind = 0; kind < SDSM_CHUNK_KINDS; kind++)
		if (r->chunk_spare[kind])
			free_pages_exact(r->chunk_spare[kind],
					 sdsm_chunk_types[kind].size);
	sdsm_rc_region_free(r);
	mem_cgroup_put(r->memcg);
	r->memcg = NULL;
}

/* ------------------------------------------------------------------ */
/* Peers                                                               */

typedef void (*sdsm_page_fn)(struct sdsm_region *r, u64 idx,
			     struct sdsm_page *pg, void *arg);

/*
 * Call @fn on the node side of every page of @r whose chunk is allocated,
 * in page order; cond_resched() after each chunk.  Takes no lock: @fn
 * takes what it needs.  A fault may publish a chunk meanwhile
 * (sdsm_chunk_get()), hence READ_ONCE().
 */
static void sdsm_page_for_each(struct sdsm_region *r, sdsm_page_fn fn,
			       void *arg)
{
	unsigned long c;
	unsigned int i;

	for (c = 0; c < r->nchunks; c++) {
		struct sdsm_chunk *chunk = READ_ONCE(r->chunks[c]);

		if (!chunk)
			continue;
		for (i = 0; i < SDSM_CHUNK_PAGES; i++) {
			u64 idx = ((u64)c << SDSM_CHUNK_SHIFT) + i;

			if (idx >= r->npages)
				break;
			fn(r, idx, &chunk->pages[i], arg);
		}
		cond_resched();
	}
}

/* A region's walk at a node's death. */
struct sdsm_peer_down_walk {
	u16 dead;
	u64 lost;	/* pages of the region that became LOST */
};

static void sdsm_page_peer_down(struct sdsm_region *r, u64 idx,
				struct sdsm_page *pg, void *arg)
{
	struct sdsm_peer_down_walk *w = arg;
	struct mutex *lock = sdsm_page_lock(r, idx);	/* the page's */
	struct sdsm_home_page *hp;
	struct sdsm_proto_ctx ctx;
	struct sdsm_pctx pc;
	u16 dead = w->dead;

	mutex_lock(lock);
	if (r->rc_chunks) {
		sdsm_rc_page_peer_down(r, idx, pg, dead);
	} else if (pg->home == dead) {
		sdsm_pctx_init(&ctx, &pc, r, idx, pg, dead);
		sdsm_proto_node_peer_down(&ctx, &pg->node, dead);
		sdsm_page_settle(r, pg);
	}
	/* Served here: the home side exists. */
	hp = pg->flags & SDSM_PAGE_TOUCHED ?
		sdsm_home_page_get(r, idx, false) : NULL;
	if (hp) {
		bool was_lost = hp->dir.state == SDSM_PROTO_HOME_LOST;

		sdsm_pctx_init(&ctx, &pc, r, idx, pg, sdsm_cl.node_id);
		pc.hp = hp;
		sdsm_proto_home_peer_down(&ctx, &hp->dir, dead);
		/* It held the page's only copy (it owned it). */
		if (!was_lost && hp->dir.state == SDSM_PROTO_HOME_LOST)
			w->lost++;
	}
	if ((pg->flags & SDSM_PAGE_HOME_ASKED) &&
	    sdsm_page_manager(r, idx) == dead) {
		/* The fault asks again and fails. */
		pg->flags &= ~SDSM_PAGE_HOME_ASKED;
		wake_up_all(sdsm_page_wq(r, idx));
	}
	mutex_unlock(lock);
}

static void sdsm_mem_region_peer_down(struct sdsm_region *r, void *arg)
{
	struct sdsm_peer_down_walk w = { .dead = *(u16 *)arg };

	sdsm_page_for_each(r, sdsm_page_peer_down, &w);
	if (w.lost) {
		pr_warn("region %u (%s): %llu page(s) lost with node %u, which held their only copy\n",
			r->id, r->name, w.lost, w.dead);
		sdsm_stat_add(SDSM_STAT_PAGES_LOST, w.lost);
	}
}

static int sdsm_mem_peer_event(struct notifier_block *nb,
			       unsigned long event, void *data)
{
	struct sdsm_peer *peer = data;
	u16 id = peer->id;

	switch (event) {
	case SDSM_PEER_EVENT_DOWN:
		/* Its send queue is purged and marked dead already. */
		sdsm_region_peer_down(id);
		sdsm_region_for_each(sdsm_mem_region_peer_down, &id);
		break;
	case SDSM_PEER_EVENT_UP:
		sdsm_region_peer_up(id);
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block sdsm_mem_peer_nb = {
	.notifier_call = sdsm_mem_peer_event,
};

/* ------------------------------------------------------------------ */
/* Leaving: the pages a node held writable go back to their homes      */

/*
 * A node whose module unloads would take with it every page of a
 * sequential region it holds writable: their homes would mark them LOST
 * (stats/pages_lost).  So, before it says BYE (sdsm_mem_leave()), it
 * flushes the diffs of its release regions (sdsm_rc_release()) and asks
 * each home of a page it holds writable to take its pages back (HANDBACK,
 * answered by REPLY).  The home reads each such page itself, as a fault
 * there would (sdsm_fault_proto()): the leaving node answers the FETCH
 * (or FETCH_INV) with the data and keeps at most a read copy, which its
 * BYE then drops.  Nothing new for the protocol core: a read at the
 * home of a page another node holds writable is its ordinary work.
 * Documentation/protocol.rst, "Leaving".
 */

/* What a leaving node holds writable of pages homed elsewhere. */
struct sdsm_leave_count {
	u64 homes;	/* their homes */
	u64 pages;
};

/*
 * Count page @idx of @r if it is held writable here and homed on another
 * node.  Unlocked: no process maps it any more (the module is unloading),
 * and the handlers only take pages away, so the count can only be high.
 */
static void sdsm_page_count_writable(struct sdsm_region *r, u64 idx,
				     struct sdsm_page *pg, void *arg)
{
	struct sdsm_leave_count *n = arg;
	u8 home = READ_ONCE(pg->home);

	if (READ_ONCE(pg->node.state) != SDSM_PROTO_NODE_M ||
	    home == sdsm_cl.node_id || home >= sdsm_cl.nr_nodes)
		return;
	n->homes |= BIT_ULL(home);
	n->pages++;
}

static void sdsm_region_count_writable(struct sdsm_region *r, void *arg)
{
	if (!r->rc_chunks)
		sdsm_page_for_each(r, sdsm_page_count_writable, arg);
}

/**
 * struct sdsm_take_back - a home taking back the pages a leaving node holds
 * @src: the leaving node
 * @asked: sdsm_rc_notice_key() of every page read here for it
 * @failed: pages whose read could not start (the error of the last)
 * @err: that error
 */
struct sdsm_take_back {
	u16 src;
	struct xarray asked;
	u64 failed;
	int err;
};

/*
 * Start a read here of page @idx of @r if it is homed here and node
 * @tb->src holds it writable.
 */
static void sdsm_page_take_back(struct sdsm_region *r, u64 idx,
				struct sdsm_page *pg, void *arg)
{
	struct mutex *lock = sdsm_page_lock(r, idx);	/* the page's */
	struct sdsm_take_back *tb = arg;
	struct sdsm_home_page *hp;
	struct sdsm_proto_ctx ctx;
	struct sdsm_pctx pc;
	int rc;

	if (!(READ_ONCE(pg->flags) & SDSM_PAGE_TOUCHED))
		return;
	mutex_lock(lock);
	hp = sdsm_home_page_get(r, idx, false);
	if (!hp || pg->err || hp->dir.state != SDSM_PROTO_HOME_MODIFIED ||
	    hp->dir.owner != tb->src)
		goto unlock;
	/*
	 * Its directory serves requests here, so this node is its home,
	 * though it may never have had to resolve that for a fault of its
	 * own.
	 */
	sdsm_page_set_home(r, pg, sdsm_cl.node_id);
	if (pg->home != sdsm_cl.node_id)
		goto unlock;
	sdsm_pctx_init(&ctx, &pc, r, idx, pg, pg->home);
	rc = sdsm_fault_proto(&ctx, &pc, false);
	sdsm_page_settle(r, pg);
	mutex_unlock(lock);
	if (rc == SDSM_PROTO_WAIT)
		rc = xa_err(xa_store(&tb->asked, sdsm_rc_notice_key(r->id, idx),
				     xa_mk_value(0), GFP_KERNEL));
	if (rc < 0) {
		tb->failed++;
		tb->err = rc;
	}
	return;
unlock:
	mutex_unlock(lock);
}

/* Locks: the regions' mutex (sdsm_region_for_each()). */
static void sdsm_region_take_back(struct sdsm_region *r, void *arg)
{
	if (!r->rc_chunks)
		sdsm_page_for_each(r, sdsm_page_take_back, arg);
}

/*
 * Whether page @idx of region @id is back at its home here: no longer
 * held writable by @src.  Waits for the read started for it, up to
 * @deadline (jiffies).  Return: 1 back, 0 not, -ENOENT if the region was
 * destroyed meanwhile (nothing to lose, nothing handed back).
 */
static int sdsm_taken_back(u32 id, u64 idx, u16 src, unsigned long deadline)
{
	struct sdsm_region *r = sdsm_region_get(id);
	struct sdsm_home_page *hp;
	struct sdsm_page *pg;
	struct mutex *lock;	/* the page's */
	int back = 1;

	if (!r)
		return -ENOENT;
	pg = sdsm_page_get(r, idx, false);
	if (pg)
		wait_event_timeout(*sdsm_page_wq(r, idx),
				   sdsm_page_settled(r, idx, pg),
				   max_t(long, deadline - jiffies, 1));
	lock = sdsm_page_lock(r, idx);
	mutex_lock(lock);
	hp = sdsm_home_page_get(r, idx, false);
	if (hp && (hp->dir.state == SDSM_PROTO_HOME_LOST ||
		   (hp->dir.state == SDSM_PROTO_HOME_MODIFIED &&
		    hp->dir.owner == src)))
		back = 0;
	mutex_unlock(lock);
	sdsm_region_put(r);
	return back;
}

/**
 * sdsm_mem_take_back - take back the pages node @src holds writable
 * @src: a node about to unload its module (it sent HANDBACK)
 *
 * Read here every page homed here that @src holds writable, all at once,
 * and wait for them, up to fault_timeout_ms.  Context: a work item (it
 * waits for @src's answers).
 *
 * Return: 0 when every such page is back here, else a negative errno.
 */
static int sdsm_mem_take_back(u16 src)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(sdsm_fault_timeout_ms);
	struct sdsm_take_back tb = { .src = src };
	u64 back = 0, missed = 0;
	unsigned long key;
	void *entry;

	xa_init(&tb.asked);
	sdsm_region_for_each(sdsm_region_take_back, &tb);
	/* A page whose home is also its manager may need a message to self. */
	sdsm_queue_drain_self();
	xa_for_each(&tb.asked, key, entry) {
		int ret = sdsm_taken_back(sdsm_rc_notice_key_region(key),
					  sdsm_rc_notice_key_page(key), src,
					  deadline);

		if (ret > 0)
			back++;
		else if (!ret)
			missed++;
	}
	xa_destroy(&tb.asked);
	if (back) {
		sdsm_stat_add(SDSM_STAT_PAGES_HANDED_BACK, back);
		pr_info("node %u is leaving: %llu page(s) it held writable handed back\n",
			src, back);
	}
	if (missed || tb.failed) {
		pr_warn("node %u is leaving: %llu page(s) it held writable not handed back\n",
			src, missed + tb.failed);
		return tb.err ?: -ETIMEDOUT;
	}
	return 0;
}

/**
 * struct sdsm_handback_req - a HANDBACK received, for sdsm_handback_work
 * @node: on sdsm_handback_reqs
 * @src: the leaving node
 * @cookie: its call, answered by REPLY
 */
struct sdsm_handback_req {
	struct list_head node;
	u16 src;
	u64 cookie;
};

static DEFINE_SPINLOCK(sdsm_handback_lock);	/* sdsm_handback_reqs */
static LIST_HEAD(sdsm_handback_reqs);
static void sdsm_handback_fn(struct work_struct *work);
static DECLARE_WORK(sdsm_handback_work, sdsm_handback_fn);

/* Node @src asks for HANDBACK: queued, a handler must not wait for it. */
static void sdsm_handback_recv(u16 src, u64 cookie)
{
	struct sdsm_handback_req *req = kmalloc(sizeof(*req), GFP_KERNEL);

	if (!req) {
		sdsm_reply(src, cookie, ENOMEM, NULL);
		return;
	}
	req->src = src;
	req->cookie = cookie;
	spin_lock(&sdsm_handback_lock);
	list_add_tail(&req->node, &sdsm_handback_reqs);
	spin_unlock(&sdsm_handback_lock);
	queue_work(sdsm_mem_wq, &sdsm_handback_work);
}

static struct sdsm_handback_req *sdsm_handback_next(void)
{
	struct sdsm_handback_req *req;

	spin_lock(&sdsm_handback_lock);
	req = list_first_entry_or_null(&sdsm_handback_reqs,
				       struct sdsm_handback_req, node);
	if (req)
		list_del(&req->node);
	spin_unlock(&sdsm_handback_lock);
	return req;
}

static void sdsm_handback_fn(struct work_struct *work)
{
	struct sdsm_handback_req *req;

	while ((req = sdsm_handback_next())) {
		sdsm_reply(req->src, req->cookie,
			   -sdsm_mem_take_back(req->src), NULL);
		kfree(req);
	}
}

/* After the handlers went: no HANDBACK is queued any more. */
static void sdsm_handback_exit(void)
{
	struct sdsm_handback_req *req;

	cancel_work_sync(&sdsm_handback_work);
	while ((req = sdsm_handback_next()))
		kfree(req);
}

/**
 * sdsm_mem_leave - hand back what only this node holds, before it unloads
 *
 * Context: module exit, after /dev/sdsm went (no process maps a region),
 * before the BYE.  Bounded by about twice fault_timeout_ms.
 */
void sdsm_mem_leave(void)
{
	struct sdsm_leave_count n = {}, left = {};
	int ret;

	ret = sdsm_rc_release();
	if (ret)
		pr_warn("leaving: the last writes to release regions may not have reached their homes: %d\n",
			ret);
	sdsm_region_for_each(sdsm_region_count_writable, &n);
	if (!n.pages)
		return;
	ret = sdsm_region_handback(n.homes);
	sdsm_region_for_each(sdsm_region_count_writable, &left);
	if (left.pages)
		pr_warn("leaving: %llu of %llu page(s) held writable not handed back to their homes (%d): they are lost\n",
			left.pages, n.pages, ret);
	else
		pr_info("leaving: %llu page(s) held writable handed back to their homes\n",
			n.pages);
}

/* ------------------------------------------------------------------ */

/* Called by sdsm_init() before anything starts: one log line per error. */
int sdsm_mem_check_params(void)
{
	if (sdsm_fault_timeout_ms < 100 || sdsm_fault_timeout_ms > 600000) {
		pr_err("fault_timeout_ms=%u out of range 100..600000\n",
		       sdsm_fault_timeout_ms);
		return -EINVAL;
	}
	if (default_region_mb < 1 || default_region_mb > 65536) {
		pr_err("default_region_mb=%u out of range 1..65536\n",
		       default_region_mb);
		return -EINVAL;
	}
	return sdsm_region_check_params();
}

int sdsm_mem_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(sdsm_page_locks); i++)
		mutex_init(&sdsm_page_locks[i]);
	for (i = 0; i < ARRAY_SIZE(sdsm_page_wqs); i++)
		init_waitqueue_head(&sdsm_page_wqs[i]);
	for (i = 0; i < SDSM_MAX_NODES; i++)
		atomic64_set(&sdsm_homed_pages[i], 0);

	ret = simple_pin_fs(&sdsm_fs_type, &sdsm_fs_mnt, &sdsm_fs_cnt);
	if (ret) {
		pr_err("cannot mount the sdsm pseudo file system: %d\n", ret);
		return ret;
	}
	sdsm_inode = alloc_anon_inode(sdsm_fs_mnt->mnt_sb);
	if (IS_ERR(sdsm_inode)) {
		ret = PTR_ERR(sdsm_inode);
		sdsm_inode = NULL;
		goto out_release_fs;
	}
	INIT_DELAYED_WORK(&sdsm_hold_work, sdsm_hold_work_fn);
	spin_lock_init(&sdsm_spares.lock);
	INIT_WORK(&sdsm_spares.work, sdsm_spare_work);
	hrtimer_init(&sdsm_hold_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	sdsm_hold_timer.function = sdsm_hold_timer_fn;
	sdsm_mem_wq = alloc_workqueue("sdsm_mem", WQ_UNBOUND | WQ_MEM_RECLAIM,
				      0);
	if (!sdsm_mem_wq) {
		ret = -ENOMEM;
		goto out_put_inode;
	}
	ret = sdsm_region_init(default_region_mb, sdsm_cl.kobj);
	if (ret)
		goto out_destroy_wq;
	for (i = 0; i < ARRAY_SIZE(sdsm_mem_msg_types); i++) {
		ret = sdsm_handler_register(sdsm_mem_msg_types[i],
					    sdsm_mem_handler);
		if (ret)
			goto out_unregister;
	}
	ret = sdsm_peer_notifier_register(&sdsm_mem_peer_nb);
	if (ret)
		goto out_unregister;
	return 0;

out_unregister:
	while (i--)
		sdsm_handler_unregister(sdsm_mem_msg_types[i]);
	sdsm_handback_exit();
	sdsm_holds_exit();
	sdsm_region_exit();
out_destroy_wq:
	destroy_workqueue(sdsm_mem_wq);
out_put_inode:
	iput(sdsm_inode);
	sdsm_inode = NULL;
out_release_fs:
	simple_release_fs(&sdsm_fs_mnt, &sdsm_fs_cnt);
	return ret;
}

/*
 * After /dev/sdsm is gone and the transport stopped: no file, no VMA, no
 * fault, no message and no handler is left.
 */
void sdsm_mem_exit(void)
{
	unsigned int i;

	sdsm_peer_notifier_unregister(&sdsm_mem_peer_nb);
	for (i = 0; i < ARRAY_SIZE(sdsm_mem_msg_types); i++)
		sdsm_handler_unregister(sdsm_mem_msg_types[i]);
	sdsm_handback_exit();
	sdsm_holds_exit();
	destroy_workqueue(sdsm_mem_wq);
	sdsm_spare_exit();
	sdsm_region_exit();
	iput(sdsm_inode);
	sdsm_inode = NULL;
	simple_release_fs(&sdsm_fs_mnt, &sdsm_fs_cnt);
}
