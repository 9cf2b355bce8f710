/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm coherent memory: regions, per-page state, placement and the glue
 * between the page-fault path, the coherence protocol (sdsm_proto.c) and
 * the transport (sdsm_send()).
 *
 * Files:
 *  - sdsm_mem.c: the module-owned address_space, mmap, the fault path,
 *    the protocol's actions, per-destination message queues, peer death.
 *  - sdsm_region.c: the region table, cluster-wide create / open /
 *    destroy, placement (policy ranges, page managers), the ioctls of
 *    regions and placement, sysfs regions/.
 *
 * Objects:
 *  - struct sdsm_region: refcounted (kref); the table holds one reference,
 *    every VMA one, every in-flight fault or handler one.  Its pages'
 *    state lives in lazily allocated chunks and is freed with it.
 *  - struct sdsm_page: the node side of one page and this node's copy
 *    (what its processes map), on every node that touched the page.
 *  - struct sdsm_home_page: the home side of one page, the directory entry
 *    and the home copy (the directory's data, NULL while all zero), only
 *    on a node that served a request for the page as its home.
 *    Both are protected by the page's hashed mutex, sdsm_page_lock(), and
 *    live in chunks of SDSM_CHUNK_PAGES allocated on first use, whole
 *    pages each (sdsm_chunk_alloc()), or ahead of it: a region keeps one
 *    spare chunk of each kind it uses (sdsm_chunk_get()).  Their size is
 *    the module's memory per page: /sys/kernel/sdsm/metadata_bytes_per_page.
 */
#ifndef SDSM_MEM_H
#define SDSM_MEM_H

#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/sdsm.h>

#include "sdsm.h"
#include "sdsm_proto.h"
#include "sdsm_rc.h"

/* Region ids: creator node in the high bits, a per-node counter below. */
#define SDSM_REGION_ID_SHIFT	16
#define SDSM_REGION_ID_MAX	((SDSM_MAX_NODES << SDSM_REGION_ID_SHIFT) - 1)
/* The mmap offset of region id is id << SDSM_REGION_OFFSET_SHIFT. */
#define SDSM_REGION_OFFSET_SHIFT	40
#define SDSM_REGION_MAX_BYTES	BIT_ULL(SDSM_REGION_OFFSET_SHIFT)

#define SDSM_CHUNK_SHIFT	9
#define SDSM_CHUNK_PAGES	BIT(SDSM_CHUNK_SHIFT)

/* Policy ranges a region may accumulate through SET_POLICY. */
#define SDSM_MAX_POLICY_RANGES	256

/* struct sdsm_page.flags */
enum {
	SDSM_PAGE_HOME_ASKED = 0x01,	/* HOME_REQ to the manager in flight */
	SDSM_PAGE_TOUCHED = 0x02,	/* the directory here served a request */
	SDSM_PAGE_CACHED = 0x04,	/* counted in pages_cached */
	SDSM_PAGE_HOMED = 0x08,		/* counted in pages_homed */
	SDSM_PAGE_HOME_STALE = 0x10,	/* refused (ESTALE): ask the manager */
	SDSM_PAGE_TIMED = 0x20,		/* @req_us times a fault's request */
	SDSM_PAGE_PREFETCHED = 0x40,	/* copy asked ahead, no fault since */
	SDSM_PAGE_SPARE = 0x80,		/* @copy is the spare, not a copy */
};

/**
 * struct sdsm_page - what this node knows about one page, on every node
 * @node: node-side protocol state
 * @flags: SDSM_PAGE_*
 * @err: a positive errno, 0 if none: every fault fails with SIGBUS
 *	(sticky), except ENOMEM, a home short of memory, which fails one
 *	fault (sdsm_page_err())
 * @home: the page's home as resolved here, SDSM_PROTO_NO_NODE until then
 * @mgr_home: at the page's manager: the home it fixed, or NO_NODE
 * @req_us: sdsm_now_us() when the request in flight was sent; the fault's
 *	wait is bounded from then, and if SDSM_PAGE_TIMED the answer's
 *	latency goes to the histogram
 * @copy: this node's copy (node state S or M), else NULL; or, with
 *	SDSM_PAGE_SPARE (state I only), the spare: a page the fault path
 *	allocated, charged to the faulting task's memory cgroup, before it
 *	sent a request, which the grant's install takes as the copy.  Read
 *	it with sdsm_page_copy().
 *
 * Locks: every field is protected by sdsm_page_lock(region, index).
 */
struct sdsm_page {
	struct sdsm_proto_node node;
	u8 flags;
	u8 err;
	u8 home;
	u8 mgr_home;
	u32 req_us;
	struct page *copy;
};

/**
 * struct sdsm_home_page - the home side of one page
 * @dir: the directory entry
 * @home_copy: the home copy; NULL means all zeroes
 *
 * Locks: sdsm_page_lock(region, index), as struct sdsm_page.
 */
struct sdsm_home_page {
	struct sdsm_proto_home dir;
	struct page *home_copy;
};

struct sdsm_chunk {
	struct sdsm_page pages[SDSM_CHUNK_PAGES];
};

struct sdsm_home_chunk {
	struct sdsm_home_page pages[SDSM_CHUNK_PAGES];
};

/**
 * struct sdsm_rc_slot - a page of a release-consistent region
 * @st: node-side protocol state (sdsm_rc.h)
 * @home: home-side protocol state, used where the page's home is
 * @twin: the copy as it was when this interval's first write came (node
 *	state RW only)
 * @home_copy: at the page's home: the home copy, NULL while all zero
 *
 * The node copy is struct sdsm_page.copy, as for sequential regions.
 * Locks: sdsm_page_lock(region, index), then the region's @rc_lock.
 */
struct sdsm_rc_slot {
	struct sdsm_rc_page st;
	struct sdsm_rc_home home;
	struct page *twin;
	struct page *home_copy;
};

struct sdsm_rc_chunk {
	struct sdsm_rc_slot pages[SDSM_CHUNK_PAGES];
};

/* The kinds of chunk of page state a region has (struct sdsm_region). */
enum sdsm_chunk_kind {
	SDSM_CHUNK_NODE,	/* struct sdsm_chunk, @chunks */
	SDSM_CHUNK_HOME,	/* struct sdsm_home_chunk, @home_chunks */
	SDSM_CHUNK_RC,		/* struct sdsm_rc_chunk, @rc_chunks */
	SDSM_CHUNK_KINDS
};

/*
 * What a release needs to know of a chunk of a region's pages before it
 * walks them: how many are written in this interval (state RW), and the
 * largest stamp of their knowledge (struct sdsm_rc_page).  Updated at the
 * end of every core call (sdsm_rc_done()) under the region's rc_lock;
 * read by releases without it, which skip a chunk with nothing to flush
 * or nothing new to publish (Documentation/protocol.rst, "Release
 * consistency in the module").
 */
struct sdsm_rc_sum {
	unsigned int nr_rw;
	u64 stamp;
};

/* One SET_POLICY: pages [first, first + npages) follow @policy. */
struct sdsm_policy_range {
	struct list_head node;
	u64 first;
	u64 npages;
	struct sdsm_policy policy;
};

/*
 * Sequential streams of read faults a region follows at once: a loop over
 * the rows of two arrays (a matrix multiply's A and B) is two streams.
 */
#define SDSM_RA_STREAMS	4

/*
 * Pages a fault may skip past where its stream expected it and still
 * continue it: a loop that reads every second, third or fourth page (a
 * column of a matrix whose rows span 2 to 4 pages) is a stream too, and
 * its read-ahead brings the pages in between, which the loop's next
 * columns read.
 */
#define SDSM_RA_GAP	3

/**
 * struct sdsm_ra_stream - a sequential stream of read faults
 * @last: the page of its last fault
 * @next: the page its next fault touches: the first past @last not mapped
 *	  around that fault
 * @end: the first page past those it prefetched; 0: no stream
 * @win: pages it reads ahead of a fault now (0: not sequential yet)
 * @used: the region's @ra_clock when a fault last started or continued it
 */
struct sdsm_ra_stream {
	u64 last;
	u64 next;
	u64 end;
	unsigned int win;
	u64 used;
};

/**
 * struct sdsm_region - a region of coherent memory
 * @ref: references: table, VMAs, faults and handlers in flight
 * @id: cluster-wide id; mmap offset is id << SDSM_REGION_OFFSET_SHIFT
 * @name: NUL-terminated; "default" for region 0
 * @length: bytes
 * @npages: length / PAGE_SIZE
 * @policy: the policy at creation (validated, normalized)
 * @uid: owner, the creator's effective uid (the same number on every node)
 * @gid: the creator's effective gid
 * @mode: permission bits, 0..0777, as for a file (sdsm_region_permission())
 * @consistency: enum sdsm_consistency, fixed at creation
 * @manager: the manager of every page whose home @policy does not compute
 *	(SDSM_REGION_F_MANAGER), or SDSM_PROTO_NO_NODE: each page's
 *	interleave node over all nodes (sdsm_page_manager())
 * @lock: protects @nr_maps against @dying, and @policies
 * @nr_maps: VMAs of this node that map the region
 * @dying: destroy in progress (the destroyer's token, which names its
 *	node: sdsm_destroy_token()); no new mmap
 * @in_doubt: @dying's destroyer went down before this node learned its
 *	decision; a work item asks the other nodes (sdsm_region.c, "Destroys
 *	in doubt")
 * @announced: every node that was up knew the region when this node last
 *	looked (sdsm_region_announce()); only rises, read without a lock
 * @policies: struct sdsm_policy_range, newest first
 * @nr_policies: entries on @policies
 * @pages_homed: pages whose directory is here and was used
 * @pages_cached: pages this node holds a copy of (state S or M)
 * @kobj: regions/<id>
 * @memcg: the memory cgroup of the first process of this node that mapped
 *	the region (a reference), NULL before; the page copies that handlers
 *	allocate for the region are charged to it (set_active_memcg())
 * @ra_lock: protects @ra and @ra_clock
 * @ra: the sequential streams of read faults followed (sdsm_prefetch())
 * @ra_clock: read faults that looked at @ra, for its least recently used
 * @nchunks: entries of @chunks and of @home_chunks
 * @chunks: lazily allocated node-side page state, never freed before the
 *	region
 * @home_chunks: the same of the home side, allocated where a request for
 *	one of the chunk's pages is served as its home
 * @rc_chunks: release consistency only (else NULL): the pages' struct
 *	sdsm_rc_slot, lazily allocated like @chunks
 * @rc_sums: release consistency only: a struct sdsm_rc_sum per entry of
 *	@rc_chunks, allocated with it
 * @rc_used: release consistency: every allocated entry of @rc_chunks is
 *	below it (it only rises, by cmpxchg, after the entry is published):
 *	the walks of a release stop there, so their cost follows the pages
 *	used, not the region's length
 * @chunk_spare: per enum sdsm_chunk_kind, a chunk allocated ahead of the
 *	fault or handler that will need one, or NULL: taken and put back
 *	with xchg() and cmpxchg() only (sdsm_chunk_get())
 * @chunks_used: per kind, the chunks published in @chunks, @home_chunks
 *	or @rc_chunks; only rises
 * @spare_work: refills @chunk_spare off the faults' path; queued with a
 *	reference to the region, which it drops
 * @rc_lock: release consistency: protects @rc_local and @rc_sums; taken
 *	inside a page's mutex around every call of the protocol core
 *	(sdsm_rc.c), which updates @rc_local for any page of the region
 * @rc_local: release consistency: this node's bookkeeping of releases
 */
struct sdsm_region {
	struct kref ref;
	u32 id;
	char name[SDSM_NAME_MAX];
	u64 length;
	u64 npages;
	struct sdsm_policy policy;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	u32 consistency;
	u16 manager;

	spinlock_t lock;		/* see above */
	unsigned int nr_maps;
	u64 dying;
	bool in_doubt;
	bool announced;
	struct list_head policies;
	unsigned int nr_policies;

	atomic64_t pages_homed;
	atomic64_t pages_cached;
	struct kobject *kobj;
	struct mem_cgroup *memcg;

	spinlock_t ra_lock;		/* see above */
	struct sdsm_ra_stream ra[SDSM_RA_STREAMS];
	u64 ra_clock;

	unsigned long nchunks;
	struct sdsm_chunk **chunks;
	struct sdsm_home_chunk **home_chunks;
	struct sdsm_rc_chunk **rc_chunks;
	struct sdsm_rc_sum *rc_sums;
	unsigned long rc_used;
	void *chunk_spare[SDSM_CHUNK_KINDS];
	atomic_long_t chunks_used[SDSM_CHUNK_KINDS];
	struct work_struct spare_work;
	struct mutex rc_lock;		/* see above */
	struct sdsm_rc_local rc_local;
};

/* The error the page's faults fail with, 0 or a negative errno. */
static inline int sdsm_page_err(const struct sdsm_page *pg)
{
	return -(int)READ_ONCE(pg->err);
}

/* The key of a write notice of page @page of region @region. */
static inline unsigned long sdsm_rc_notice_key(u32 region, u64 page)
{
	return ((unsigned long)region << SDSM_REGION_OFFSET_SHIFT) | page;
}

/* The region and the page of the notice key @key. */
static inline u32 sdsm_rc_notice_key_region(unsigned long key)
{
	return key >> SDSM_REGION_OFFSET_SHIFT;
}

static inline u64 sdsm_rc_notice_key_page(unsigned long key)
{
	return key & (SDSM_REGION_MAX_BYTES - 1);
}

/*
 * A region's clock (struct sdsm_rc_local) starts at the number of the
 * release regions allocated on this node before it, times 2^40; from
 * the 2^22nd on at 0, which leaves it out of what struct sdsm_rc_publish
 * remembers (sdsm_rc_region_init()).
 */
#define SDSM_RC_CLOCK_SHIFT	40
#define SDSM_RC_INCARNATIONS	BIT(22)

/**
 * struct sdsm_rc_publish - the write notices of one release
 * @notices: by sdsm_rc_notice_key(), values sdsm_rc_entry(version, 0)
 * @since: region id -> xa_mk_value(its clock at this node's previous
 *	publish to the same lock, barrier or futex): only the notices
 *	stamped after it (a region not in it: all of its notices)
 * @clocks: region id -> xa_mk_value(its clock now), the object's next
 *	@since once this publish reached its manager
 * @nr: entries of @notices
 *
 * Filled by sdsm_rc_knowledge(); Documentation/protocol.rst, "Publishing".
 */
struct sdsm_rc_publish {
	struct xarray notices;
	struct xarray *since;
	struct xarray clocks;
	unsigned long nr;
};

/*
 * An entry of a notice xarray: the version released, and the stamp a lock
 * table gives it when it rises (0 elsewhere), in the 31 bits left of an
 * xarray value above the version.
 */
#define SDSM_RC_STAMP_MAX	((1U << 31) - 1)
static_assert(BITS_PER_LONG == 64);

static inline void *sdsm_rc_entry(u32 version, u32 stamp)
{
	return xa_mk_value((unsigned long)stamp << 32 | version);
}

static inline u32 sdsm_rc_entry_version(const void *entry)
{
	return (u32)xa_to_value(entry);
}

static inline u32 sdsm_rc_entry_stamp(const void *entry)
{
	return xa_to_value(entry) >> 32;
}

/*
 * Keep in @notices the larger of @version and the version already there
 * for notice key @key, with @stamp when it rises; a key not there yet is
 * added only if @may_add.
 * Return: 1 if the key was added, 0 if nothing was added, -ENOMEM.
 */
static inline int sdsm_rc_keep_max(struct xarray *notices, unsigned long key,
				   u32 version, u32 stamp, bool may_add)
{
	void *old = xa_load(notices, key);
	int ret;

	if (old ? sdsm_rc_entry_version(old) >= version : !may_add)
		return 0;
	ret = xa_err(xa_store(notices, key, sdsm_rc_entry(version, stamp),
			      GFP_KERNEL));
	return ret ?: !old;
}

static inline u64 sdsm_region_offset(const struct sdsm_region *r)
{
	return (u64)r->id << SDSM_REGION_OFFSET_SHIFT;
}

/* module parameters (sdsm_mem.c) */
extern unsigned int sdsm_fault_timeout_ms;

/* sdsm_mem.c */
extern atomic64_t sdsm_homed_pages[SDSM_MAX_NODES];
struct mutex *sdsm_page_lock(const struct sdsm_region *r, u64 idx);
struct sdsm_page *sdsm_page_get(struct sdsm_region *r, u64 idx, bool alloc);
size_t sdsm_chunk_bytes(size_t size);
void sdsm_page_set_home(struct sdsm_region *r, struct sdsm_page *pg, u16 home);
int sdsm_mem_open(struct inode *inode, struct file *file);
int sdsm_mem_mmap(struct file *file, struct vm_area_struct *vma);
struct sdsm_region *sdsm_vma_region(struct vm_area_struct *vma, u64 *idx,
				    unsigned long addr);
void sdsm_mem_region_init(struct sdsm_region *r);
void sdsm_mem_region_free(struct sdsm_region *r);
int sdsm_mem_check_params(void);
int sdsm_rc_release(void);
int sdsm_rc_knowledge(struct sdsm_rc_publish *pub);
int sdsm_rc_notice(u32 region, u64 page, u32 version, u64 *clock);
void sdsm_mem_leave(void);
bool sdsm_rc_in_use(void);
void sdsm_rc_region_init(struct sdsm_region *r);
int sdsm_mem_init(void);
void sdsm_mem_exit(void);

/* sdsm_region.c */
struct sdsm_region *sdsm_region_get(u32 id);
bool sdsm_region_gone(u32 id);
void sdsm_region_put(struct sdsm_region *r);
bool sdsm_region_map(struct sdsm_region *r);
void sdsm_region_unmap(struct sdsm_region *r);
int sdsm_region_permission(const struct sdsm_region *r, int mask);
u16 sdsm_page_manager(const struct sdsm_region *r, u64 idx);
bool sdsm_page_home_computable(struct sdsm_region *r, u64 idx);
int sdsm_manager_decide(struct sdsm_region *r, u64 idx, struct sdsm_page *pg,
			u16 requester, bool assign);
void sdsm_home_req_recv(u16 src, const struct sdsm_wire_home *w);
void sdsm_region_msg(struct sdsm_peer *peer, u16 type, const void *payload,
		     u32 len);
void sdsm_region_peer_up(unsigned int node);
void sdsm_region_peer_down(unsigned int node);
int sdsm_region_handback(u64 homes);
void sdsm_reply(u16 dst, u64 cookie, int status,
		const struct sdsm_wire_region *region);
void sdsm_region_release_file(const struct file *file);
void sdsm_region_for_each(void (*fn)(struct sdsm_region *r, void *arg),
			  void *arg);
int sdsm_cmd_region_create(struct file *file, void *cmd);
int sdsm_cmd_region_open(struct file *file, void *cmd);
int sdsm_cmd_region_info(struct file *file, void *cmd);
int sdsm_cmd_region_destroy(struct file *file, void *cmd);
int sdsm_cmd_set_policy(struct file *file, void *cmd);
int sdsm_cmd_query_home(struct file *file, void *cmd);
int sdsm_region_check_params(void);
int sdsm_region_init(unsigned int default_mb, struct kobject *parent);
void sdsm_region_exit(void);

#endif /* SDSM_MEM_H */
